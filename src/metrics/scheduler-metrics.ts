import type { Counter, Histogram, Registry } from 'prom-client';
import { registeredCounter, registeredHistogram } from './registered-metric.ts';

/**
 * Outcome of one scheduled tick of a job: the `outcome` label of `flotilla_scheduler_runs_total`.
 *
 * @example
 * const outcome: JobOutcome = 'skipped';
 */
export type JobOutcome = 'success' | 'failure' | 'skipped';

/** The metrics a scheduler records; see {@link schedulerMetrics}. */
export interface SchedulerMetrics {
  /** `flotilla_scheduler_runs_total{job,outcome}` */
  readonly runs: Counter<'job' | 'outcome'>;
  /** `flotilla_scheduler_run_duration_seconds{job}` */
  readonly duration: Histogram<'job'>;
}

/** Buckets of the run duration histogram, in seconds: jobs run from milliseconds to many minutes. */
export const JOB_DURATION_BUCKETS: readonly number[] = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

const OUTCOMES: readonly JobOutcome[] = ['success', 'failure', 'skipped'];

/**
 * Registers (or reuses, when already there) the scheduler metrics on a registry,
 * and starts every given job's run counters at 0 so rates are defined from the start.
 *
 * @example
 * const m = schedulerMetrics(registry, ['nightly-report']);
 * m.runs.inc({ job: 'nightly-report', outcome: 'success' });
 */
export function schedulerMetrics(registry: Registry, jobs: readonly string[] = []): SchedulerMetrics {
  const runs = registeredCounter(registry, {
    name: 'flotilla_scheduler_runs_total',
    help: 'Scheduled job ticks, by job and outcome (success, failure, or skipped because the previous run was still running).',
    labelNames: ['job', 'outcome'],
  });
  const duration = registeredHistogram(registry, {
    name: 'flotilla_scheduler_run_duration_seconds',
    help: 'Duration of scheduled job runs, in seconds.',
    labelNames: ['job'],
    buckets: [...JOB_DURATION_BUCKETS],
  });
  for (const job of jobs) for (const outcome of OUTCOMES) runs.inc({ job, outcome }, 0);
  return { runs, duration };
}
