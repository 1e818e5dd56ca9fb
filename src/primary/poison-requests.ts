import type { WorkerRoutes } from '../ipc/protocol.ts';

/** Deaths on requests blamed on one route, within the window, that make it look like a poison request. */
export const POISON_DEATHS = 3;

/** The `route` a death on requests is counted under when the worker named none. */
export const UNKNOWN_ROUTE = 'unknown';

/** A route that keeps killing workers: its deaths within the window. */
export interface PoisonRoute {
  route: string;
  deaths: number;
  windowMs: number;
}

/**
 * The routes to blame for a worker that died on requests: those it had in
 * flight, or else the last one that ended (a handler that answered and then
 * threw asynchronously has already left); none when it named nothing.
 *
 * @example
 * suspectRoutes({ inFlight: [], last: '/reports/:id' }); // ['/reports/:id']
 */
export function suspectRoutes(routes: WorkerRoutes | undefined): string[] {
  if (routes === undefined) return [];
  if (routes.inFlight.length > 0) return routes.inFlight;
  return routes.last === '' ? [] : [routes.last];
}

/**
 * Counts the deaths of workers on requests by the route blamed, within a
 * sliding window, and tells when one route reaches `POISON_DEATHS`: a request
 * on it looks like a poison request (it kills whichever worker serves it). A
 * route is reported at most once per window, so a storm makes one log line,
 * not one per death.
 *
 * @example
 * const poison = new PoisonRequests(60_000);
 * for (const p of poison.died(Date.now(), ['/reports/:id'])) log.error(p, 'looks like a poison request');
 */
export class PoisonRequests {
  readonly #windowMs: number;
  readonly #deaths = new Map<string, number[]>();
  readonly #reportedAt = new Map<string, number>();

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Records a death at `now` blamed on `routes`; the routes that now look like poison and were not reported within the window. */
  died(now: number, routes: readonly string[]): PoisonRoute[] {
    this.#forget(now);
    const found: PoisonRoute[] = [];
    for (const route of new Set(routes)) {
      const deaths = this.#deaths.get(route) ?? [];
      deaths.push(now);
      this.#deaths.set(route, deaths);
      const reportedAt = this.#reportedAt.get(route);
      if (deaths.length < POISON_DEATHS || (reportedAt !== undefined && now - reportedAt < this.#windowMs)) continue;
      this.#reportedAt.set(route, now);
      found.push({ route, deaths: deaths.length, windowMs: this.#windowMs });
    }
    return found;
  }

  /** Drops what left the window. */
  #forget(now: number): void {
    for (const [route, deaths] of this.#deaths) {
      const kept = deaths.filter((t) => now - t < this.#windowMs);
      if (kept.length === 0) this.#deaths.delete(route);
      else this.#deaths.set(route, kept);
    }
    for (const [route, at] of this.#reportedAt) if (now - at >= this.#windowMs) this.#reportedAt.delete(route);
  }
}
