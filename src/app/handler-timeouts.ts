import type { Ctx } from './ctx.ts';

/**
 * A request is timed out at most this late (plus the event loop's own delay): the timer is re-armed
 * no sooner than that after a scan, so that many long requests with staggered deadlines share wake-ups.
 */
const SLACK_MS = 10;

/**
 * The handler timeouts of an App's requests, on one timer for all of them: watching a request costs a
 * Map entry (no timer of its own, and no clock read: the pipeline passes its start time), about a
 * third of a `setTimeout`/`clearTimeout` pair (`bench/timeout-cost.ts`). The timer is armed for the
 * earliest deadline (at least {@link SLACK_MS} after the previous scan); when it fires it scans the
 * requests still watched, times out those past their deadline whose response has not started (a
 * streamed reply whose head went out is no longer the timeout's), and re-arms for the next one. With
 * one limit for every request it wakes about once per limit under load, and once more after the last
 * request: an idle App has no timer.
 *
 * @example
 * const timeouts = new HandlerTimeouts((ctx) => answer503(ctx));
 * timeouts.watch(ctx, started + 20_000); // when the route is found
 * timeouts.unwatch(ctx); // when the response ends
 */
export class HandlerTimeouts {
  /** Each request's deadline (`performance.now()` time). */
  readonly #watched = new Map<Ctx, number>();
  readonly #onTimeout: (ctx: Ctx) => void;
  #timer: NodeJS.Timeout | undefined;
  #wakeAt = Number.POSITIVE_INFINITY;

  constructor(onTimeout: (ctx: Ctx) => void) {
    this.#onTimeout = onTimeout;
  }

  /** How many requests are watched. */
  get size(): number {
    return this.#watched.size;
  }

  /** Times `ctx` out at `at` (`performance.now()` time: its start plus its limit) unless {@link unwatch} comes first. */
  watch(ctx: Ctx, at: number): void {
    this.#watched.set(ctx, at);
    if (at < this.#wakeAt) this.#arm(at, performance.now());
  }

  unwatch(ctx: Ctx): void {
    this.#watched.delete(ctx);
  }

  /** Drops the timer and every watch (the App has closed). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wakeAt = Number.POSITIVE_INFINITY;
    this.#watched.clear();
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
    for (const [ctx, at] of this.#watched) {
      if (ctx.res.headersSent) {
        this.#watched.delete(ctx);
      } else if (at <= now) {
        this.#watched.delete(ctx);
        this.#onTimeout(ctx);
      } else if (at < next) {
        next = at;
      }
    }
    if (next !== Number.POSITIVE_INFINITY && next < this.#wakeAt) this.#arm(Math.max(next, now + SLACK_MS), now);
  };
}
