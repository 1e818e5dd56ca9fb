import type { Worker } from 'node:cluster';
import type { CounterStore, WindowCount } from '../coordination/counter-store.ts';
import { msg, type RateLimitCount, type RateLimitHitsMessage } from '../ipc/protocol.ts';

/**
 * The cluster's rate-limit counts, kept by the primary's main thread, where every worker's IPC
 * arrives (ARCHITECTURE.md, "Rate limits"): the hits of every `flotilla:rate-limit-hits` are counted
 * in one store, so the workers together never admit more than a limit, and answered to their worker
 * in one `flotilla:rate-limit-counts`. The store (memory, or the coordinator with
 * `coordination.url`) is opened on the first hit: a service without rate limits has none.
 *
 * @example
 * const counts = new ClusterCounts(() => openCounterStore(config, logger));
 * dispatcher<WorkerMessage, Worker>({ …, 'flotilla:rate-limit-hits': (m, worker) => counts.hits(worker, m) });
 */
export class ClusterCounts {
  readonly #open: () => CounterStore;
  #store: CounterStore | undefined;

  constructor(open: () => CounterStore) {
    this.#open = open;
  }

  hits(worker: Worker, message: RateLimitHitsMessage): void {
    this.#store ??= this.#open();
    const store = this.#store;
    const answers: (RateLimitCount | Promise<RateLimitCount>)[] = [];
    let waiting = false;
    for (const { id, key, windowMs, undo } of message.hits) {
      let counted: WindowCount | Promise<WindowCount>;
      try {
        counted = undo ? released(store.release(key)) : store.hit(key, windowMs);
      } catch {
        answers.push(countOf(id, undefined));
        continue;
      }
      if (counted instanceof Promise) {
        waiting = true;
        answers.push(
          counted.then(
            (c) => countOf(id, c),
            () => countOf(id, undefined),
          ),
        );
      } else answers.push(countOf(id, counted));
    }
    const answer = (counts: RateLimitCount[]) => {
      if (worker.isConnected()) worker.send(msg.rateLimitCounts(counts));
    };
    // at the coordinator, the hits of one message go out together (pipelined) and are answered together
    if (waiting) void Promise.all(answers).then(answer);
    else answer(answers as RateLimitCount[]);
  }

  /** Closes the store (its coordinator connection); the counts are gone. */
  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    await store?.close();
  }
}

/** A release's answer: no count to tell (0), only whether the store took it. */
function released(done: void | Promise<void>): WindowCount | Promise<WindowCount> {
  const none = { count: 0, resetMs: 0 };
  return done instanceof Promise ? done.then(() => none) : none;
}

function countOf(id: number, counted: WindowCount | undefined): RateLimitCount {
  return counted === undefined
    ? { id, ok: false, count: 0, resetMs: 0 }
    : { id, ok: true, count: counted.count, resetMs: Math.max(0, counted.resetMs) };
}
