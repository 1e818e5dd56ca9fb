import type { Worker } from 'node:cluster';
import type { QueueLimits } from './queue-codel.ts';

/**
 * A worker's warm-up: from its fork to the end of its first second of connections. A worker starting
 * takes some 300 ms of CPU from the cores the others serve on, and once up it is slow at first (its
 * first request alone takes some 30 ms: lazy initialisation, code not yet optimised): the queue that
 * leaves is a start's (the cluster's, a replacement's, a rolling restart's), not an overload's.
 */
const WARMUP_MS = 1_000;

/**
 * The deadline while a worker warms up, when larger than the configured one (slow start, as load
 * balancers give new backends): the queue drops only once its oldest has waited longer than 200 ms
 * for 500 ms, and only what waited that long. A start under a steady load leaves a queue of some
 * 100 ms standing for half a second (two workers on two cores, one of them starting); with the
 * configured 20 / 100 ms the primary answered it 503. reliability/results/after-handoff.md and
 * overload.md have the 503s these limits removed.
 */
export const WARMUP_LIMITS: QueueLimits = { targetMs: 200, intervalMs: 500 };

/**
 * Which workers warm up (see {@link WARMUP_MS}), as the distributor hears of them: forked, up,
 * handed their first connection, gone.
 *
 * @example
 * const warmUp = new WarmUp(); warmUp.forked(w); … warmUp.up(w); warmUp.handed(w, now);
 * const { targetMs, intervalMs } = warmUp.limits(now, openWorkers, configured);
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

  /** The queue's deadline now: `configured`, or {@link WARMUP_LIMITS} where larger while a worker warms up. */
  limits(now: number, open: Iterable<Worker>, configured: QueueLimits): QueueLimits {
    if (!this.warming(now, open)) return configured;
    return {
      targetMs: Math.max(configured.targetMs, WARMUP_LIMITS.targetMs),
      intervalMs: Math.max(configured.intervalMs, WARMUP_LIMITS.intervalMs),
    };
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
