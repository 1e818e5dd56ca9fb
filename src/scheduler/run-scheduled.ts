import { createError } from '../errors/flotilla-error.ts';
import type { Scheduler } from './scheduler.ts';

/**
 * `app.runScheduled(name)`: the job `name` of the first scheduler that has one (its `jobNames`), run
 * once, now, through its `runJob`; resolves when it finishes, rejects with its error. A name no
 * scheduler has rejects with `FLO_ERR_UNKNOWN_JOB`, which lists the names there are.
 *
 * @example
 * await runScheduledJob(schedulers, 'daily-report');
 */
export async function runScheduledJob(schedulers: readonly Scheduler[], name: string): Promise<void> {
  const known: string[] = [];
  for (const scheduler of schedulers) {
    const names = scheduler.jobNames ?? [];
    if (typeof scheduler.runJob === 'function' && names.includes(name)) return scheduler.runJob(name);
    if (typeof scheduler.runJob === 'function') known.push(...names);
  }
  throw createError('FLO_ERR_UNKNOWN_JOB', { name: JSON.stringify(name), known: describeJobs(known) });
}

/**
 * The job names for a message: `the jobs are "a", "b"`, or that there is none.
 *
 * @example
 * describeJobs(['report']); // 'the jobs are "report"'
 */
export function describeJobs(names: readonly string[]): string {
  return names.length === 0 ? 'no job is registered' : `the jobs are ${names.map((n) => JSON.stringify(n)).join(', ')}`;
}
