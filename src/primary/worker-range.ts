import type { ResolvedConfig } from '../config/types.ts';
import { availableCpus } from '../utils/cpus.ts';

/** How many workers the primary keeps: between `min` and `max`; `scales` only for `workers: { min, max }`. */
export interface WorkerRange {
  readonly min: number;
  readonly max: number;
  /** `workers: { min, max }`: the count follows the load (`Autoscaler`); otherwise `min === max`, fixed. */
  readonly scales: boolean;
}

/**
 * `workers` from the config as a range: a number or `auto` (the CPUs the container may use) is a
 * fixed count; `{ min, max }` scales between them, `max: auto` being the CPUs. `max` is never below
 * `min` (the config's validation refuses that already).
 *
 * @example
 * workerRange(3);                          // { min: 3, max: 3, scales: false }
 * workerRange('auto', 4);                  // { min: 4, max: 4, scales: false }
 * workerRange({ min: 1, max: 'auto' }, 4); // { min: 1, max: 4, scales: true }
 */
export function workerRange(workers: ResolvedConfig['workers'], cpus: number = availableCpus()): WorkerRange {
  const count = (n: number | 'auto') => Math.max(1, Math.floor(n === 'auto' ? cpus : n));
  if (typeof workers !== 'object') {
    const fixed = count(workers);
    return { min: fixed, max: fixed, scales: false };
  }
  const min = count(workers.min);
  return { min, max: Math.max(min, count(workers.max)), scales: true };
}

/**
 * The count a running cluster of `current` workers moves to under `range`: a fixed count as is, a
 * scaling one kept where the load put it as long as it is within the bounds.
 *
 * @example
 * countWithin({ min: 1, max: 4, scales: true }, 3);  // 3
 * countWithin({ min: 1, max: 2, scales: true }, 3);  // 2
 * countWithin({ min: 2, max: 2, scales: false }, 3); // 2
 */
export function countWithin(range: WorkerRange, current: number): number {
  return Math.min(range.max, Math.max(range.min, current));
}
