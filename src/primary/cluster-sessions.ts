import type { Worker } from 'node:cluster';
import type { SessionStore } from '../coordination/session-store.ts';
import { msg, type SessionMessage, type SessionResultMessage } from '../ipc/protocol.ts';

/**
 * The pod's sessions, kept by the primary's main thread, where every worker's IPC arrives
 * (ARCHITECTURE.md, "Sessions"): a session one worker saved is read by the next, and outlives the
 * worker (a crash, a recycling, a rolling restart). The store (memory, or the coordinator with
 * `sessions.store: coordination`) is opened on the first operation: a service without sessions has
 * none. Each `flotilla:session` is answered to its worker with a `flotilla:session-result`.
 *
 * @example
 * const sessions = new ClusterSessions(() => openSessionStore(config, logger));
 * dispatcher<WorkerMessage, Worker>({ …, 'flotilla:session': (m, worker) => sessions.handle(worker, m) });
 */
export class ClusterSessions {
  readonly #open: () => SessionStore;
  #store: SessionStore | undefined;

  constructor(open: () => SessionStore) {
    this.#open = open;
  }

  handle(worker: Worker, message: SessionMessage): void {
    this.#store ??= this.#open();
    this.#run(this.#store, message).then(
      (result) => {
        if (worker.isConnected()) worker.send(result);
      },
      () => {
        if (worker.isConnected()) worker.send(msg.sessionResult(message.id, false));
      },
    );
  }

  /** Closes the store (its coordinator connection); the sessions of a memory store are gone. */
  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    await store?.close();
  }

  async #run(store: SessionStore, { id, op, sid, data, ttlMs }: SessionMessage): Promise<SessionResultMessage> {
    if (op === 'set') await store.set(sid, data, ttlMs);
    else if (op === 'delete') await store.delete(sid);
    else {
      const session = await store.get(sid);
      if (session !== undefined) return msg.sessionResult(id, true, true, session.data, session.ttlLeftMs);
    }
    return msg.sessionResult(id, true);
  }
}
