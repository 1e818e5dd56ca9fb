import { MAX_MESSAGE_ID } from './protocol.ts';

/** What a request's promise is rejected with, in words: the reply came too late, or the requests were closed. */
export interface ReplyErrors {
  /** No reply within the timeout (a late reply is dropped). */
  timeout: string;
  /** `close()` was called: the pending requests are rejected with it, and every request after. */
  closed: string;
}

/** The requests sent in one message: one timer for all of them, cleared once the last is answered. */
interface Batch {
  timer: NodeJS.Timeout | undefined;
  left: number;
}

interface Pending<T> {
  resolve(reply: T): void;
  reject(error: Error): void;
  batch: Batch;
}

/** What a request whose message could not be sent (the channel closed, or closing under the send) is rejected with. */
export const UNREACHABLE = 'the primary cannot be reached (IPC channel closed)';

/**
 * The requests one side sent over IPC and awaits the replies of, by correlation id (the `id` of
 * `flotilla:session`, of each hit of `flotilla:rate-limit-hits`): a request's promise settles with its
 * reply (`settle`), or rejects when its message could not be sent, when no reply came within
 * `timeoutMs` of the send (a late reply is then dropped), or when the requests are closed. Several
 * requests may travel in one message and share one timer (`sent` with their ids).
 *
 * @example
 * const replies = new PendingReplies<SessionResultMessage>(1_500, { timeout: 'no answer within 1500 ms', closed: 'closed' });
 * const id = replies.nextId();
 * const reply = replies.wait(id);
 * replies.sent(id, trySend(() => process.send?.(msg.session(id, 'get', sid)) !== undefined));
 * // on the answer: replies.settle(m.id, m.ok ? m : new Error('the store failed'))
 */
export class PendingReplies<T> {
  readonly #timeoutMs: number;
  readonly #errors: ReplyErrors;
  readonly #pending = new Map<number, Pending<T>>();
  #lastId = 0;
  #closed = false;

  constructor(timeoutMs: number, errors: ReplyErrors) {
    this.#timeoutMs = timeoutMs;
    this.#errors = errors;
  }

  /** Requests awaiting their reply (sent, or about to be). */
  get size(): number {
    return this.#pending.size;
  }

  /** `close()` was called: a new request is to be refused (rejected with `closedError()`). */
  get closed(): boolean {
    return this.#closed;
  }

  /** What a request after `close()` is rejected with. */
  closedError(): Error {
    return new Error(this.#errors.closed);
  }

  /** The id of a new request: 1, 2, …, `MAX_MESSAGE_ID`, then 1 again. */
  nextId(): number {
    this.#lastId = this.#lastId >= MAX_MESSAGE_ID ? 1 : this.#lastId + 1;
    return this.#lastId;
  }

  /** The reply to the request `id`, once `settle(id, …)` gives it; its timer starts when it is `sent`. */
  wait(id: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, batch: { timer: undefined, left: 1 } });
    });
  }

  /**
   * The message carrying the requests `ids` (one id, or the entries of a batch, each with its `id`) was
   * sent (`ok`), and their timer starts; or it could not be (`ok` false), and they are rejected at once.
   */
  sent(ids: number | readonly { id: number }[], ok: boolean): void {
    if (!ok) {
      if (typeof ids === 'number') this.settle(ids, new Error(UNREACHABLE));
      else for (const { id } of ids) this.settle(id, new Error(UNREACHABLE));
      return;
    }
    const single = typeof ids === 'number';
    const batch: Batch = { timer: undefined, left: single ? 1 : ids.length };
    if (single) this.#join(ids, batch);
    else for (const { id } of ids) this.#join(id, batch);
    if (batch.left <= 0) return;
    batch.timer = setTimeout(() => {
      if (single) this.settle(ids, new Error(this.#errors.timeout));
      else for (const { id } of ids) this.settle(id, new Error(this.#errors.timeout));
    }, this.#timeoutMs);
  }

  /** Settles the request `id` with its reply, or rejects it with `outcome`; an unknown or settled id is ignored. */
  settle(id: number, outcome: T | Error): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    if (--pending.batch.left <= 0 && pending.batch.timer !== undefined) clearTimeout(pending.batch.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  /** Rejects every pending request (with the `closed` error), and every request after. */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) this.settle(id, this.closedError());
  }

  /** The request `id` travels in `batch` (settled already: it does not count). */
  #join(id: number, batch: Batch): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) batch.left--;
    else pending.batch = batch;
  }
}

/**
 * Sends with `send`, true when the message went: false when `send` says it cannot (the channel is
 * closed) or throws (a channel closing under the send).
 *
 * @example
 * replies.sent(id, trySend(() => this.#send(message)));
 */
export function trySend(send: () => boolean): boolean {
  try {
    return send();
  } catch {
    return false;
  }
}
