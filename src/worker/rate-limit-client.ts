import type { CounterStore, WindowCount } from '../coordination/counter-store.ts';
import { MAX_RATE_ID, msg, type RateLimitCountMessage, type RateLimitHitMessage } from '../ipc/protocol.ts';

interface Pending {
  resolve(count: WindowCount): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A cluster worker's {@link CounterStore}: each hit is asked of the primary, which counts for every
 * worker (`flotilla:rate-limit-hit`, answered by `flotilla:rate-limit-count` with the same id). An
 * answer that does not come within `timeoutMs` rejects the hit (the route's `onStoreError` applies);
 * a late answer is dropped.
 *
 * @example
 * const store = new PrimaryCounterStore((m) => process.send?.(m), 1_500);
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:rate-limit-count') store.answered(m) });
 */
export class PrimaryCounterStore implements CounterStore {
  readonly #send: (message: RateLimitHitMessage) => boolean;
  readonly #timeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #lastId = 0;
  #closed = false;

  /** `send`: sends a message to the primary, false when it cannot (the channel is closed). */
  constructor(send: (message: RateLimitHitMessage) => boolean, timeoutMs: number) {
    this.#send = send;
    this.#timeoutMs = timeoutMs;
  }

  /** Hits waiting for the primary's answer. */
  get pending(): number {
    return this.#pending.size;
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    if (this.#closed) return Promise.reject(new Error('the rate-limit store is closed'));
    this.#lastId = this.#lastId >= MAX_RATE_ID ? 1 : this.#lastId + 1;
    const id = this.#lastId;
    return new Promise<WindowCount>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`the primary did not count the request within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      let sent = false;
      try {
        sent = this.#send(msg.rateLimitHit(id, key, windowMs));
      } catch {
        // a channel closing under the send: as unreachable
      }
      if (!sent) this.#settle(id, new Error('the primary cannot be reached (IPC channel closed)'));
    });
  }

  /** The primary's answer to one of this store's hits. */
  answered(message: RateLimitCountMessage): void {
    this.#settle(
      message.id,
      message.ok ? { count: message.count, resetMs: message.resetMs } : new Error('the primary could not count the request'),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) this.#settle(id, new Error('the rate-limit store is closed'));
  }

  #settle(id: number, outcome: WindowCount | Error): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }
}
