import type { Counter, Histogram, Registry } from 'prom-client';
import { registeredCounter, registeredHistogram } from './registered-metric.ts';

/**
 * Outcome of one scheduled tick of a job: the `outcome` label of `flotilla_scheduler_runs_total`.
 *
 * @example
 * const outcome: JobOutcome = 'skipped';
 */
export type JobOutcome = 'success' | 'failure' | 'skipped';

/**
 * Why a tick was skipped: the `reason` label of `flotilla_scheduler_runs_total{outcome="skipped"}`.
 * `overlap`: the job's previous run was still running; `coordinator-error`: the coordinator
 * (`coordination.url`) could not be reached or did not answer in time; `clock-skew`: this
 * replica's clock is further than `coordination.maxClockSkewMs` from the coordinator's.
 *
 * @example
 * const reason: SkipReason = 'coordinator-error';
 */
export type SkipReason = 'overlap' | 'coordinator-error' | 'clock-skew';

/** The metrics a scheduler records; see {@link schedulerMetrics}. */
export interface SchedulerMetrics {
  /** `flotilla_scheduler_runs_total{job,outcome,reason}`, `reason` on skipped ticks only */
  readonly runs: Counter<'job' | 'outcome' | 'reason'>;
  /** `flotilla_scheduler_run_duration_seconds{job}` */
  readonly duration: Histogram<'job'>;
}

/** Buckets of the run duration histogram, in seconds: jobs run from milliseconds to many minutes. */
export const JOB_DURATION_BUCKETS: readonly number[] = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

const COORDINATED_SKIPS: readonly SkipReason[] = ['coordinator-error', 'clock-skew'];

/**
 * Registers (or reuses, when already there) the scheduler metrics on a registry,
 * and starts every given job's run counters at 0 so rates are defined from the start
 * (the coordinated skip reasons too when `coordinated`).
 *
 * @example
 * const m = schedulerMetrics(registry, ['nightly-report']);
 * m.runs.inc({ job: 'nightly-report', outcome: 'success' });
 */
export function schedulerMetrics(registry: Registry, jobs: readonly string[] = [], coordinated = false): SchedulerMetrics {
  const runs = registeredCounter(registry, {
    name: 'flotilla_scheduler_runs_total',
    help: 'Scheduled job ticks, by job and outcome (success, failure, or skipped, with the reason: overlap, coordinator-error, clock-skew).',
    labelNames: ['job', 'outcome', 'reason'],
  });
  const duration = registeredHistogram(registry, {
    name: 'flotilla_scheduler_run_duration_seconds',
    help: 'Duration of scheduled job runs, in seconds.',
    labelNames: ['job'],
    buckets: [...JOB_DURATION_BUCKETS],
  });
  for (const job of jobs) {
    runs.inc({ job, outcome: 'success' }, 0);
    runs.inc({ job, outcome: 'failure' }, 0);
    runs.inc({ job, outcome: 'skipped', reason: 'overlap' }, 0);
    if (coordinated) for (const reason of COORDINATED_SKIPS) runs.inc({ job, outcome: 'skipped', reason }, 0);
  }
  return { runs, duration };
}
