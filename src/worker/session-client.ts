import type { SessionStore, StoredSession } from '../coordination/session-store.ts';
import { PendingReplies, trySend } from '../ipc/pending-replies.ts';
import { msg, type SessionMessage, type SessionResultMessage } from '../ipc/protocol.ts';

/**
 * A cluster worker's {@link SessionStore}: its sessions are kept by the primary, for every worker
 * of the pod (ARCHITECTURE.md, "Sessions"): each operation one `flotilla:session`, answered by a
 * `flotilla:session-result` of the same id. An operation not answered within `timeoutMs` rejects
 * (the request gets 503 `SESSION_STORE_UNAVAILABLE`); a late answer is dropped (src/ipc/pending-replies.ts).
 *
 * @example
 * const store = new PrimarySessionStore((m) => process.send?.(m) !== undefined, 1_500);
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:session-result') store.answered(m) });
 */
export class PrimarySessionStore implements SessionStore {
  readonly #send: (message: SessionMessage) => boolean;
  readonly #replies: PendingReplies<SessionResultMessage>;

  /** `send`: sends a message to the primary, false when it cannot (the channel is closed). */
  constructor(send: (message: SessionMessage) => boolean, timeoutMs: number) {
    this.#send = send;
    this.#replies = new PendingReplies(timeoutMs, {
      timeout: `the primary did not answer within ${timeoutMs} ms`,
      closed: 'the session store is closed',
    });
  }

  async get(id: string): Promise<StoredSession | undefined> {
    const result = await this.#ask('get', id);
    return result.found ? { data: result.data, ttlLeftMs: result.ttlLeftMs } : undefined;
  }

  async set(id: string, data: string, ttlMs: number): Promise<void> {
    await this.#ask('set', id, data, ttlMs);
  }

  async delete(id: string): Promise<void> {
    await this.#ask('delete', id);
  }

  /** The primary's answer to one of this store's messages. */
  answered(message: SessionResultMessage): void {
    this.#replies.settle(message.id, message.ok ? message : new Error('the primary could not reach the session store'));
  }

  async close(): Promise<void> {
    this.#replies.close();
  }

  #ask(op: SessionMessage['op'], sid: string, data?: string, ttlMs?: number): Promise<SessionResultMessage> {
    if (this.#replies.closed) return Promise.reject(this.#replies.closedError());
    const id = this.#replies.nextId();
    const reply = this.#replies.wait(id);
    this.#replies.sent(
      id,
      trySend(() => this.#send(msg.session(id, op, sid, data, ttlMs))),
    );
    return reply;
  }
}
