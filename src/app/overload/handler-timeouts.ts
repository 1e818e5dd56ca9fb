import { type Arrival, STARTED } from './arrival.ts';
import { DEADLINE, type InFlight, LIMIT_MS, type TrackedRequest } from './in-flight.ts';

/** A request that can be timed out: one in flight whose reply may have begun (the core's `Ctx` is one). */
export interface TimedRequest extends TrackedRequest {
  readonly res: { readonly headersSent: boolean };
  /** The limit of its deadline, written by {@link HandlerTimeouts.watch}: its timeout is answered without looking the route up again. */
  [LIMIT_MS]: number;
}

/**
 * A request is timed out at most this late (plus the event loop's own delay): the timer is re-armed
 * no sooner than that after a scan, so that many long requests with staggered deadlines share wake-ups.
 */
const SLACK_MS = 10;

/**
 * The handler timeouts of an App's requests, on one timer for all of them: watching a request writes
 * its deadline on it (no timer of its own, no table entry, no clock read: the pipeline passes its
 * start time), and leaving `InFlight` is all the unwatching there is (`bench/timeout-cost.ts`). The
 * timer is armed for the earliest deadline (at least {@link SLACK_MS} after the previous scan); when
 * it fires it scans the requests in flight, times out those past their deadline whose response has
 * not started (a streamed reply whose head went out is no longer the timeout's), and re-arms for the
 * next one. With one limit for every request it wakes about once per limit under load, and once more
 * after the last request: an idle App has no timer.
 *
 * @example
 * const timeouts = new HandlerTimeouts(inFlight, (ctx) => answer503(ctx, ctx[LIMIT_MS]));
 * timeouts.watch(ctx, started + 20_000, 20_000); // when the route is found
 */
export class HandlerTimeouts<R extends TimedRequest = TimedRequest> {
  readonly #inFlight: InFlight;
  readonly #onTimeout: (request: R) => void;
  #timer: NodeJS.Timeout | undefined;
  #wakeAt = Number.POSITIVE_INFINITY;

  constructor(inFlight: InFlight, onTimeout: (request: R) => void) {
    this.#inFlight = inFlight;
    this.#onTimeout = onTimeout;
  }

  /**
   * Times `ctx` (in flight) out at `at` (`performance.now()` time: its start plus its limit, `limitMs`,
   * kept with it for the timeout's answer) unless it ends first.
   */
  watch(ctx: R, at: number, limitMs = 0): void {
    ctx[DEADLINE] = at;
    ctx[LIMIT_MS] = limitMs;
    if (at < this.#wakeAt) this.#arm(at, performance.now());
  }

  /**
   * A route's step for its limit: watches each of its requests from when it was read (its
   * {@link STARTED}), the time it may have waited in the RequestQueue included.
   *
   * @example
   * const step = timeouts.step(20_000);
   * step(ctx); // when the route is found
   */
  step(limitMs: number): (request: R & Arrival) => void {
    return (request) => this.watch(request, request[STARTED] + limitMs, limitMs);
  }

  /** Drops the timer (the App has closed). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wakeAt = Number.POSITIVE_INFINITY;
  }

  #arm(at: number, now: number): void {
    clearTimeout(this.#timer);
    this.#wakeAt = at;
    this.#timer = setTimeout(this.#scan, Math.max(1, Math.ceil(at - now)));
    this.#timer.unref();
  }

  readonly #scan = (): void => {
    this.#timer = undefined;
    this.#wakeAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    const expired: R[] = [];
    for (const request of this.#inFlight.requests) {
      const ctx = request as R;
      const at = ctx[DEADLINE];
      if (at === 0) continue;
      if (ctx.res.headersSent) ctx[DEADLINE] = 0;
      else if (at <= now) {
        ctx[DEADLINE] = 0;
        expired.push(ctx);
      } else if (at < next) next = at;
    }
    // answered after the scan: an answer may end a request, which changes the list scanned
    for (const ctx of expired) this.#onTimeout(ctx);
    if (next !== Number.POSITIVE_INFINITY && next < this.#wakeAt) this.#arm(Math.max(next, now + SLACK_MS), now);
  };
}
