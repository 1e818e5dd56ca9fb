/**
 * When a pod with `workers: { min, max }` adds or retires a worker: a pure function of what the
 * heartbeats said, folded over their readings one at a time (`scaleStep`), so that a recorded series
 * replays to the same decisions. `Autoscaler` (autoscaler.ts) feeds it and acts.
 */

/** One reading of the pod, from the latest heartbeat answers of its listening workers. */
export interface LoadSample {
  /** When, epoch ms. */
  readonly at: number;
  /** Listening workers whose answers it sums up. */
  readonly workers: number;
  /** Their mean event-loop utilisation over their last heartbeat interval, 0 to 1. */
  readonly elu: number;
  /** The highest 99th percentile of their event-loop delay over that interval, ms: how late queued work starts. */
  readonly delayP99Ms: number;
}

/** What the container gives the pod, read when the sample is taken. */
export interface Capacity {
  /** CPUs the container may use: `os.availableParallelism()` capped by the cgroup CPU quota (`availableCpus()`). */
  readonly cpus: number;
  /** The cgroup memory limit in bytes; `undefined` when there is none. */
  readonly memoryLimitBytes: number | undefined;
  /** What the tree holds now: the workers' resident memory and the primary's, bytes. */
  readonly memoryUsedBytes: number;
  /** A worker's average resident memory, bytes: what one more is expected to take. */
  readonly workerRssBytes: number;
}

/** The thresholds; `SCALE_DEFAULTS` holds flotilla's, the config sets `min`, `max` and `scaleDownAfterMs`. */
export interface ScalePolicy {
  readonly min: number;
  readonly max: number;
  /** Lightly used for this long: one worker is retired (`cluster.scaleDownAfterMs`). */
  readonly scaleDownAfterMs: number;
  /** At or above this mean utilisation the workers are busy. */
  readonly upElu: number;
  /** Or at or above this event-loop delay (p99 of the latest), ms: work waits in a queue. */
  readonly upDelayMs: number;
  /** Busy for this long: one worker is added. */
  readonly upAfterMs: number;
  /**
   * Lightly used: the utilisation the remaining workers would have with one fewer (`elu × n / (n − 1)`)
   * is below this. Lower than `upElu`, so that a retirement never makes the pod busy enough to add one back.
   */
  readonly downElu: number;
  /** After each change, readings are not counted for this long: the new worker warms up, the load spreads again. */
  readonly coolDownMs: number;
  /** One more worker must fit in the memory limit with this share of its average size to spare. */
  readonly memoryMargin: number;
}

/**
 * flotilla's thresholds. With a heartbeat each second, a saturated pod's first busy reading comes at
 * most two rounds after the load began (an idle round is 2.5 s, and the load may have begun at its
 * end); its run is 2.5 s long two readings later (three readings a second apart, whatever the
 * timers' jitter), and the new worker listens within about a second: within 10 s.
 */
export const SCALE_DEFAULTS = {
  upElu: 0.75,
  upDelayMs: 100,
  upAfterMs: 2_500,
  downElu: 0.5,
  coolDownMs: 5_000,
  memoryMargin: 0.25,
} as const satisfies Partial<ScalePolicy>;

/** What stops a busy pod from growing: its `max`, its CPUs, or its memory. */
export type HeldBy = 'max' | 'cpus' | 'memory';

/** Where the rule stands between readings. */
export interface ScaleState {
  /** The workers the primary keeps. */
  readonly workers: number;
  /** When that count last changed, epoch ms: readings within `coolDownMs` after it are not counted. */
  readonly changedAt: number;
  /** The previous reading: the interval a reading speaks of began then. */
  readonly lastAt: number | undefined;
  /** When the current run of busy readings began: the start of its first one's interval. */
  readonly busySince: number | undefined;
  /** When the current run of light readings began. */
  readonly lightSince: number | undefined;
  /** This run of busy readings was held back already, and why (told once a run). */
  readonly heldBy: HeldBy | undefined;
}

/** What a reading leads to. */
export type ScaleDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'scale'; readonly from: number; readonly to: number; readonly reason: 'busy' | 'light' }
  | { readonly kind: 'held'; readonly by: HeldBy };

/** The state of a pod that started (or was resized to) `workers` at `at`. */
export function initialScaleState(workers: number, at: number): ScaleState {
  return { workers, changedAt: at, lastAt: undefined, busySince: undefined, lightSince: undefined, heldBy: undefined };
}

const NONE = { kind: 'none' } as const;

/**
 * One reading of the pod: the state after it, and whether to add a worker, retire one, or tell why a
 * busy pod cannot grow (once per run of busy readings).
 *
 * - A run of readings lasts from the start of its first one's interval (the previous reading, or the end
 *   of the cool-down) to its last.
 * - Busy: the mean utilisation is at least `upElu`, or the event-loop delay at least `upDelayMs`.
 *   Busy for `upAfterMs` adds a worker if the pod has fewer than `max`, fewer than its CPUs, and the
 *   memory limit (if any) holds what it uses plus one more average worker and `memoryMargin` of one.
 * - Light: not busy, and the workers would stay below `downElu` with one fewer. Light for
 *   `scaleDownAfterMs` retires one, never below `min`.
 * - A reading taken within `coolDownMs` of the last change, or of no worker, counts for nothing and
 *   breaks both runs.
 *
 * @example
 * let state = initialScaleState(1, 0);
 * const policy = { ...SCALE_DEFAULTS, min: 1, max: 2, scaleDownAfterMs: 60_000 };
 * const capacity = { cpus: 2, memoryLimitBytes: undefined, memoryUsedBytes: 0, workerRssBytes: 0 };
 * for (const at of [5_000, 6_000, 7_000, 8_000]) {
 *   const step = scaleStep(state, { at, workers: 1, elu: 0.98, delayP99Ms: 12 }, capacity, policy);
 *   state = step.state; // at 8 000 (busy since 5 000, 2.5 s passed at 7 500): { kind: 'scale', from: 1, to: 2, reason: 'busy' }
 * }
 */
export function scaleStep(
  state: ScaleState,
  sample: LoadSample,
  capacity: Capacity,
  policy: ScalePolicy,
): { state: ScaleState; decision: ScaleDecision } {
  if (sample.at < state.changedAt + policy.coolDownMs || sample.workers === 0) {
    return { state: { ...state, lastAt: sample.at, busySince: undefined, lightSince: undefined, heldBy: undefined }, decision: NONE };
  }
  const busy = sample.elu >= policy.upElu || sample.delayP99Ms >= policy.upDelayMs;
  const n = sample.workers;
  const light = !busy && n > 1 && (sample.elu * n) / (n - 1) < policy.downElu;
  // a reading speaks of the interval since the previous one: a run begins where its first reading's interval did,
  // or where the cool-down ended
  const began = Math.max(state.lastAt ?? sample.at, state.changedAt + policy.coolDownMs);
  const busySince = busy ? (state.busySince ?? began) : undefined;
  const lightSince = light ? (state.lightSince ?? began) : undefined;
  const next: ScaleState = { ...state, lastAt: sample.at, busySince, lightSince, heldBy: busy ? state.heldBy : undefined };
  const { workers } = state;

  if (busySince !== undefined && sample.at - busySince >= policy.upAfterMs) {
    const by = heldBy(workers, capacity, policy);
    if (by === undefined) return changed(state, workers + 1, sample.at, 'busy');
    return { state: { ...next, heldBy: by }, decision: state.heldBy === by ? NONE : { kind: 'held', by } };
  }
  if (lightSince !== undefined && sample.at - lightSince >= policy.scaleDownAfterMs && workers > policy.min) {
    return changed(state, workers - 1, sample.at, 'light');
  }
  return { state: next, decision: NONE };
}

/** Why one more worker cannot be added; `undefined` when it can. */
function heldBy(workers: number, capacity: Capacity, policy: ScalePolicy): HeldBy | undefined {
  if (workers >= policy.max) return 'max';
  // counted, not measured: a CPU is free while there are fewer workers than the container may run at once
  if (workers >= capacity.cpus) return 'cpus';
  const { memoryLimitBytes: limit, memoryUsedBytes: used, workerRssBytes: one } = capacity;
  if (limit !== undefined && used + one * (1 + policy.memoryMargin) > limit) return 'memory';
  return undefined;
}

function changed(state: ScaleState, to: number, at: number, reason: 'busy' | 'light'): { state: ScaleState; decision: ScaleDecision } {
  return { state: initialScaleState(to, at), decision: { kind: 'scale', from: state.workers, to, reason } };
}
