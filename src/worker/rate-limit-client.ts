import type { CounterStore, WindowCount } from '../coordination/counter-store.ts';
import { PendingReplies, trySend } from '../ipc/pending-replies.ts';
import { MAX_RATE_BATCH, msg, type RateLimitCountsMessage, type RateLimitHit, type RateLimitHitsMessage } from '../ipc/protocol.ts';

/**
 * A cluster worker's {@link CounterStore}: its hits are counted by the primary, for every worker
 * (ARCHITECTURE.md, "Rate limits"). The hits of one turn of the event loop (the requests node:http
 * parsed from every ready socket) go in one `flotilla:rate-limit-hits`, sent in that turn's check
 * phase (`setImmediate`), and the primary answers them in one `flotilla:rate-limit-counts`: one
 * message each way however many requests, which is what IPC costs under load. A hit not answered
 * within `timeoutMs` rejects (the route's `onStoreError` applies); a late answer is dropped (one timer
 * for the hits of a message, src/ipc/pending-replies.ts).
 *
 * @example
 * const store = new PrimaryCounterStore((m) => process.send?.(m) !== undefined, 1_500);
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:rate-limit-counts') store.answered(m) });
 */
export class PrimaryCounterStore implements CounterStore {
  readonly #send: (message: RateLimitHitsMessage) => boolean;
  readonly #replies: PendingReplies<WindowCount>;
  #queue: RateLimitHit[] = [];
  #flushing: NodeJS.Immediate | undefined;

  /** `send`: sends a message to the primary, false when it cannot (the channel is closed). */
  constructor(send: (message: RateLimitHitsMessage) => boolean, timeoutMs: number) {
    this.#send = send;
    this.#replies = new PendingReplies(timeoutMs, {
      timeout: `the primary did not count the request within ${timeoutMs} ms`,
      closed: 'the rate-limit store is closed',
    });
  }

  /** Hits waiting for the primary's answer (sent or about to be). */
  get pending(): number {
    return this.#replies.size;
  }

  hit(key: string, windowMs: number, undo = false): Promise<WindowCount> {
    if (this.#replies.closed) return Promise.reject(this.#replies.closedError());
    const id = this.#replies.nextId();
    const counted = this.#replies.wait(id);
    this.#queue.push({ id, key, windowMs, undo });
    if (this.#queue.length >= MAX_RATE_BATCH) this.#flush();
    else this.#flushing ??= setImmediate(() => this.#flush());
    return counted;
  }

  async release(key: string): Promise<void> {
    await this.hit(key, 1, true);
  }

  /** The primary's answers to one of this store's messages. */
  answered(message: RateLimitCountsMessage): void {
    for (const c of message.counts) {
      this.#replies.settle(c.id, c.ok ? { count: c.count, resetMs: c.resetMs } : new Error('the primary could not count the request'));
    }
  }

  async close(): Promise<void> {
    if (this.#flushing !== undefined) clearImmediate(this.#flushing);
    this.#flushing = undefined;
    this.#queue = [];
    this.#replies.close();
  }

  #flush(): void {
    if (this.#flushing !== undefined) clearImmediate(this.#flushing);
    this.#flushing = undefined;
    const hits = this.#queue;
    if (hits.length === 0) return;
    this.#queue = [];
    this.#replies.sent(
      hits,
      trySend(() => this.#send(msg.rateLimitHits(hits))),
    );
  }
}
