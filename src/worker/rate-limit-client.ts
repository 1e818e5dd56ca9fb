import type { CounterStore, WindowCount } from '../coordination/counter-store.ts';
import {
  MAX_MESSAGE_ID,
  MAX_RATE_BATCH,
  msg,
  type RateLimitCountsMessage,
  type RateLimitHit,
  type RateLimitHitsMessage,
} from '../ipc/protocol.ts';

interface Pending {
  resolve(count: WindowCount): void;
  reject(error: Error): void;
  batch: Batch;
}

/** Hits sent in one message: one timer for all of them, cleared once the last is answered. */
interface Batch {
  timer: NodeJS.Timeout | undefined;
  left: number;
}

/**
 * A cluster worker's {@link CounterStore}: its hits are counted by the primary, for every worker
 * (ARCHITECTURE.md, "Rate limits"). The hits of one turn of the event loop (the requests node:http
 * parsed from every ready socket) go in one `flotilla:rate-limit-hits`, sent in that turn's check
 * phase (`setImmediate`), and the primary answers them in one `flotilla:rate-limit-counts`: one
 * message each way however many requests, which is what IPC costs under load. A hit not answered
 * within `timeoutMs` rejects (the route's `onStoreError` applies); a late answer is dropped.
 *
 * @example
 * const store = new PrimaryCounterStore((m) => process.send?.(m) !== undefined, 1_500);
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:rate-limit-counts') store.answered(m) });
 */
export class PrimaryCounterStore implements CounterStore {
  readonly #send: (message: RateLimitHitsMessage) => boolean;
  readonly #timeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #queue: RateLimitHit[] = [];
  #queued: Pending[] = [];
  #flushing: NodeJS.Immediate | undefined;
  #lastId = 0;
  #closed = false;

  /** `send`: sends a message to the primary, false when it cannot (the channel is closed). */
  constructor(send: (message: RateLimitHitsMessage) => boolean, timeoutMs: number) {
    this.#send = send;
    this.#timeoutMs = timeoutMs;
  }

  /** Hits waiting for the primary's answer (sent or about to be). */
  get pending(): number {
    return this.#pending.size;
  }

  hit(key: string, windowMs: number, undo = false): Promise<WindowCount> {
    if (this.#closed) return Promise.reject(new Error('the rate-limit store is closed'));
    this.#lastId = this.#lastId >= MAX_MESSAGE_ID ? 1 : this.#lastId + 1;
    const id = this.#lastId;
    return new Promise<WindowCount>((resolve, reject) => {
      const pending: Pending = { resolve, reject, batch: { timer: undefined, left: 0 } };
      this.#pending.set(id, pending);
      this.#queue.push({ id, key, windowMs, undo });
      this.#queued.push(pending);
      if (this.#queue.length >= MAX_RATE_BATCH) this.#flush();
      else this.#flushing ??= setImmediate(() => this.#flush());
    });
  }

  async release(key: string): Promise<void> {
    await this.hit(key, 1, true);
  }

  /** The primary's answers to one of this store's messages. */
  answered(message: RateLimitCountsMessage): void {
    for (const c of message.counts) {
      this.#settle(c.id, c.ok ? { count: c.count, resetMs: c.resetMs } : new Error('the primary could not count the request'));
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#flushing !== undefined) clearImmediate(this.#flushing);
    this.#flushing = undefined;
    this.#queue = [];
    this.#queued = [];
    for (const id of [...this.#pending.keys()]) this.#settle(id, new Error('the rate-limit store is closed'));
  }

  #flush(): void {
    if (this.#flushing !== undefined) clearImmediate(this.#flushing);
    this.#flushing = undefined;
    const hits = this.#queue;
    const queued = this.#queued;
    if (hits.length === 0) return;
    this.#queue = [];
    this.#queued = [];
    const batch: Batch = { timer: undefined, left: hits.length };
    for (const pending of queued) pending.batch = batch;
    let sent = false;
    try {
      sent = this.#send(msg.rateLimitHits(hits));
    } catch {
      // a channel closing under the send: as unreachable
    }
    if (!sent) {
      for (const hit of hits) this.#settle(hit.id, new Error('the primary cannot be reached (IPC channel closed)'));
      return;
    }
    batch.timer = setTimeout(() => {
      for (const hit of hits) this.#settle(hit.id, new Error(`the primary did not count the request within ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
  }

  #settle(id: number, outcome: WindowCount | Error): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    if (--pending.batch.left <= 0 && pending.batch.timer !== undefined) clearTimeout(pending.batch.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }
}
