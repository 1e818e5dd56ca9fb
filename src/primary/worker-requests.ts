import type { WorkerMessage, WorkerRoutes } from '../ipc/protocol.ts';

/**
 * What the primary knows of each worker's requests, from its messages:
 * whether it received any (`flotilla:first-request`, a heartbeat's count, or
 * a route named),
 * and the routes it was serving as last heard (its last heartbeat's, replaced
 * by those of its dying `flotilla:fatal`). Kept by worker, not by slot, so a
 * replacement starting next to the slot's worker is told apart; forgotten
 * with the worker.
 *
 * @example
 * const requests = new WorkerRequests<Worker>();
 * cluster.on('message', (worker, m) => { if (isWorkerMessage(m)) requests.heard(worker, m) });
 * requests.received(worker); // true: its death is no boot failure
 */
export class WorkerRequests<W extends object> {
  readonly #received = new WeakSet<W>();
  readonly #routes = new WeakMap<W, WorkerRoutes>();

  heard(worker: W, message: WorkerMessage): void {
    switch (message.type) {
      case 'flotilla:first-request':
        this.#received.add(worker);
        return;
      case 'flotilla:pong':
        if (message.requests > 0) this.#received.add(worker);
        this.#learn(worker, message.routes);
        return;
      case 'flotilla:fatal':
        this.#learn(worker, message.routes);
        return;
    }
  }

  /** A route named is a request received, whatever else was lost. */
  #learn(worker: W, routes: WorkerRoutes): void {
    this.#routes.set(worker, routes);
    if (routes.inFlight.length > 0 || routes.last !== '') this.#received.add(worker);
  }

  /** Whether the worker received at least one request. */
  received(worker: W): boolean {
    return this.#received.has(worker);
  }

  /** The routes it was serving as last heard; undefined before its first heartbeat or fatal message. */
  routes(worker: W): WorkerRoutes | undefined {
    return this.#routes.get(worker);
  }
}
