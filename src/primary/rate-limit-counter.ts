import type { Worker } from 'node:cluster';
import type { CounterStore, WindowCount } from '../coordination/counter-store.ts';
import { msg, type RateLimitHitMessage } from '../ipc/protocol.ts';

/**
 * The cluster's rate-limit counts, kept by the primary's main thread, where every worker's IPC
 * arrives (ARCHITECTURE.md, "Rate limits"): each `flotilla:rate-limit-hit` is counted in one store,
 * so the workers together never admit more than a limit, and answered to its worker. The store
 * (memory, or the coordinator with `coordination.url`) is opened on the first hit: a service
 * without rate limits has none.
 *
 * @example
 * const counts = new ClusterCounts(() => openCounterStore(config, logger));
 * supervisor.onMessage = (worker, m) => { if (m.type === 'flotilla:rate-limit-hit') counts.hit(worker, m) };
 */
export class ClusterCounts {
  readonly #open: () => CounterStore;
  #store: CounterStore | undefined;

  constructor(open: () => CounterStore) {
    this.#open = open;
  }

  hit(worker: Worker, message: RateLimitHitMessage): void {
    this.#store ??= this.#open();
    const answer = (counted: WindowCount | undefined) => {
      if (worker.isConnected()) worker.send(msg.rateLimitCount(message.id, counted));
    };
    let counted: WindowCount | Promise<WindowCount>;
    try {
      counted = this.#store.hit(message.key, message.windowMs);
    } catch {
      answer(undefined);
      return;
    }
    if (counted instanceof Promise) counted.then(answer, () => answer(undefined));
    else answer(counted);
  }

  /** Closes the store (its coordinator connection); the counts are gone. */
  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    await store?.close();
  }
}
