/** Where `InFlight` keeps a request (its index in the list; -1: not in flight). */
export const SLOT: unique symbol = Symbol('flotilla.inFlight.slot');
/** When a request's route work times out (`performance.now()` time; 0: no limit). See handler-timeouts.ts. */
export const DEADLINE: unique symbol = Symbol('flotilla.inFlight.deadline');
/** The limit its {@link DEADLINE} was set from, in milliseconds (what a timed-out request's answer names). */
export const LIMIT_MS: unique symbol = Symbol('flotilla.inFlight.limitMs');

/**
 * A request as `InFlight` sees it: its route template, empty until (or unless) a route matched, and
 * two fields of InFlight's own that the request carries, so that entering and leaving touch no hash
 * table (`Ctx` declares them).
 */
export interface TrackedRequest {
  readonly route: string;
  [SLOT]: number;
  [DEADLINE]: number;
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
 * A list of the requests themselves, each knowing its place in it: entering
 * appends, leaving moves the last one into the gap, so the hot path hashes
 * nothing; their routes are read only when asked for (`routes()`), and the
 * handler timeouts scan the same list (`HandlerTimeouts`).
 *
 * @example
 * const inFlight = new InFlight();
 * inFlight.enter(ctx); … inFlight.leave(ctx);
 * inFlight.routes(); // { inFlight: [], last: '/books/:id' }
 */
export class InFlight {
  readonly #requests: TrackedRequest[] = [];
  /** The route of the last request that ended, kept as a string: the request itself is not retained. */
  #last: string | undefined;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#requests.length;
  }

  /** The requests in flight, in no particular order (read, never changed, by the caller). */
  get requests(): readonly TrackedRequest[] {
    return this.#requests;
  }

  enter(request: TrackedRequest): void {
    request[SLOT] = this.#requests.push(request) - 1;
  }

  leave(request: TrackedRequest): void {
    const slot = request[SLOT];
    if (slot < 0 || this.#requests[slot] !== request) return;
    const last = this.#requests.pop() as TrackedRequest;
    if (last !== request) {
      this.#requests[slot] = last;
      last[SLOT] = slot;
    }
    request[SLOT] = -1;
    this.#last = request.route;
    if (this.#requests.length === 0 && this.#waiters.length > 0) for (const wake of this.#waiters.splice(0)) wake();
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
    return this.#requests.length === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
