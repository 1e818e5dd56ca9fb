import type { Worker } from 'node:cluster';

/**
 * A worker's warm-up: from its fork to the end of its first second of connections. A worker starting
 * takes some 300 ms of CPU from the cores the others serve on, and once up it is slow at first (its
 * first request alone takes some 30 ms: lazy initialisation, code not yet optimised): the queue that
 * leaves is a start's (the cluster's, a replacement's, a rolling restart's), not an overload's.
 */
const WARMUP_MS = 1_000;

/**
 * How long the primary's queue must stand before it drops while a worker warms up, instead of
 * `overload.queueIntervalMs` (slow start, as load balancers give new backends;
 * reliability/results/after-handoff.md has the 503s it removed).
 */
export const WARMUP_INTERVAL_MS = 500;

/**
 * Which workers warm up (see {@link WARMUP_MS}), as the distributor hears of them: forked, up,
 * handed their first connection, gone.
 *
 * @example
 * const warmUp = new WarmUp(); warmUp.forked(w); … warmUp.up(w); warmUp.handed(w, now);
 * const interval = warmUp.warming(now, openWorkers) ? WARMUP_INTERVAL_MS : intervalMs;
 */
export class WarmUp {
  readonly #ms: number;
  /** Forked, not yet taking connections. */
  readonly #starting = new Set<Worker>();
  /** When each worker was handed its first connection (`performance.now()`). */
  readonly #firstAt = new Map<Worker, number>();

  /** `ms`: the warm-up's length (0: none; tests). */
  constructor(ms = WARMUP_MS) {
    this.#ms = ms;
  }

  forked(worker: Worker): void {
    this.#starting.add(worker);
  }

  up(worker: Worker): void {
    this.#starting.delete(worker);
  }

  gone(worker: Worker): void {
    this.#starting.delete(worker);
    this.#firstAt.delete(worker);
  }

  handed(worker: Worker, now: number): void {
    if (!this.#firstAt.has(worker)) this.#firstAt.set(worker, now);
  }

  /** Whether a worker starts, or one of `open` (those taking connections) is in its first `ms` of them. */
  warming(now: number, open: Iterable<Worker>): boolean {
    if (this.#ms <= 0) return false;
    if (this.#starting.size > 0) return true;
    for (const worker of open) {
      const first = this.#firstAt.get(worker);
      if (first === undefined || now - first < this.#ms) return true;
    }
    return false;
  }
}
