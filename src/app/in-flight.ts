/** A request as `InFlight` sees it: its route template, empty until (or unless) a route matched. */
export interface TrackedRequest {
  readonly route: string;
}

/**
 * The routes of the requests a process was serving: the templates of those in
 * flight (deduplicated, in no particular order) and of the last one to end. A
 * worker sends it to the primary with its heartbeats and its dying message,
 * which names the route of a request that keeps killing workers.
 */
export interface RequestRoutes {
  inFlight: string[];
  /** Empty before any request ended. */
  last: string;
}

/** The `route` of a request no route matched, as the request metrics label it. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The requests being served: how many, which routes, and when none are left.
 * A set of the requests themselves, so the hot path only adds and deletes one
 * entry; their routes are read only when asked for (`routes()`).
 *
 * @example
 * const inFlight = new InFlight();
 * inFlight.enter(ctx); … inFlight.leave(ctx);
 * inFlight.routes(); // { inFlight: [], last: '/books/:id' }
 */
export class InFlight {
  readonly #requests = new Set<TrackedRequest>();
  /** The route of the last request that ended, kept as a string: the request itself is not retained. */
  #last: string | undefined;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#requests.size;
  }

  enter(request: TrackedRequest): void {
    this.#requests.add(request);
  }

  leave(request: TrackedRequest): void {
    this.#requests.delete(request);
    this.#last = request.route;
    if (this.#requests.size === 0) for (const wake of this.#waiters.splice(0)) wake();
  }

  /** The route templates of the requests in flight and of the last one that ended (`unmatched` for no route). */
  routes(): RequestRoutes {
    const inFlight = new Set<string>();
    for (const request of this.#requests) inFlight.add(request.route || UNMATCHED_ROUTE);
    const last = this.#last === undefined ? '' : this.#last || UNMATCHED_ROUTE;
    return { inFlight: [...inFlight], last };
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    return this.#requests.size === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
