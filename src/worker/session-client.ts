import type { SessionStore, StoredSession } from '../coordination/session-store.ts';
import { MAX_MESSAGE_ID, msg, type SessionMessage, type SessionResultMessage } from '../ipc/protocol.ts';

interface Pending {
  resolve(result: SessionResultMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A cluster worker's {@link SessionStore}: its sessions are kept by the primary, for every worker
 * of the pod (ARCHITECTURE.md, "Sessions"): each operation one `flotilla:session`, answered by a
 * `flotilla:session-result` of the same id. An operation not answered within `timeoutMs` rejects
 * (the request gets 503 `SESSION_STORE_UNAVAILABLE`); a late answer is dropped.
 *
 * @example
 * const store = new PrimarySessionStore((m) => process.send?.(m) !== undefined, 1_500);
 * process.on('message', (m) => { if (isPrimaryMessage(m) && m.type === 'flotilla:session-result') store.answered(m) });
 */
export class PrimarySessionStore implements SessionStore {
  readonly #send: (message: SessionMessage) => boolean;
  readonly #timeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #lastId = 0;
  #closed = false;

  /** `send`: sends a message to the primary, false when it cannot (the channel is closed). */
  constructor(send: (message: SessionMessage) => boolean, timeoutMs: number) {
    this.#send = send;
    this.#timeoutMs = timeoutMs;
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
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.ok) pending.resolve(message);
    else pending.reject(new Error('the primary could not reach the session store'));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(new Error('the session store is closed'));
    }
  }

  #ask(op: SessionMessage['op'], sid: string, data?: string, ttlMs?: number): Promise<SessionResultMessage> {
    if (this.#closed) return Promise.reject(new Error('the session store is closed'));
    this.#lastId = this.#lastId >= MAX_MESSAGE_ID ? 1 : this.#lastId + 1;
    const id = this.#lastId;
    return new Promise<SessionResultMessage>((resolve, reject) => {
      let sent = false;
      try {
        sent = this.#send(msg.session(id, op, sid, data, ttlMs));
      } catch {
        // a channel closing under the send: as unreachable
      }
      if (!sent) {
        reject(new Error('the primary cannot be reached (IPC channel closed)'));
        return;
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`the primary did not answer within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
    });
  }
}
