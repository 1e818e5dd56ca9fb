import { createRequire } from 'node:module';
import type { Span, Tracer } from '@opentelemetry/api';
import type * as NodeCron from 'node-cron';
import type { Logger as CronLogger, RunCoordinator, ScheduledTask } from 'node-cron';
import { type Logger, pino } from 'pino';
import { createError } from '../errors/flotilla-error.ts';
import { type JobOutcome, type SchedulerMetrics, type SkipReason, schedulerMetrics } from '../metrics/scheduler-metrics.ts';
import { runInScope } from '../utils/context-storage.ts';
import { otel } from '../utils/otel-api.ts';
import { describeJobs } from './run-scheduled.ts';
import type { FireCoordinator, Scheduler, SchedulerEnv } from './scheduler.ts';

const { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } = otel;

let lib: typeof NodeCron.default | undefined;

/**
 * node-cron, required on first use: a worker loads this module with the App but runs no scheduler
 * (some 3 MB of heap per process saved at rest, bench/results/footprint.md).
 */
function nodeCron(): typeof NodeCron.default {
  lib ??= (createRequire(import.meta.url)('node-cron') as { default: typeof NodeCron.default }).default;
  return lib;
}

/**
 * One fire of a cron job, as its `run` receives it.
 *
 * @example
 * run: (signal, fire) => db.query('INSERT INTO reports (fire, …) VALUES ($1, …) ON CONFLICT (fire) DO NOTHING', [fire.key])
 */
export interface CronFire {
  /**
   * `${job name}:${scheduled time, ISO 8601}`, e.g. `report:2026-05-20T06:00:00.000Z`: the same on
   * every replica for one fire, different for the next. A key for idempotent writes.
   */
  readonly key: string;
  /** The scheduled time of the fire (not the moment it started). */
  readonly date: Date;
}

/**
 * A job of a {@link CronScheduler}.
 *
 * @example
 * const report: CronJob = { name: 'daily-report', cron: '0 0 6 * * *', run: (signal) => reports.send({ signal }) };
 */
export interface CronJob {
  /** Unique within the scheduler (within the service with `coordination.url`); the `job` label of its metrics and logs. */
  name: string;
  /** A node-cron expression: 5 fields, or 6 with seconds first (`0 30 3 * * *` is 03:30:00 daily). */
  cron: string;
  /** One run. `signal` aborts when the scheduler's `stop(signal)` deadline passes; `fire` says which fire it is. */
  run: (signal: AbortSignal, fire: CronFire) => Promise<void> | void;
}

/**
 * Options of a {@link CronScheduler}.
 *
 * @example
 * new CronScheduler(jobs, { timezone: 'Europe/Paris' });
 */
export interface CronSchedulerOptions {
  /** IANA time zone the expressions are read in (`Europe/Paris`). Default: the process's. */
  timezone?: string;
}

interface Run {
  readonly controller: AbortController;
  /** Settles once the run has finished and been reported. */
  readonly done: Promise<void>;
}

interface Ran {
  outcome: Exclude<JobOutcome, 'skipped'>;
  error: unknown;
  durationMs: number;
  span: Span | undefined;
}

/**
 * Runs jobs on cron schedules (node-cron underneath). A job never overlaps
 * itself: a tick while its previous run is still going is skipped (logged at
 * warn, counted as `skipped`). A run that throws or rejects is logged and
 * counted as a `failure`; it never crashes the process.
 *
 * Bound to an App (`bind`), it logs one line per run, counts runs in
 * `flotilla_scheduler_runs_total{job,outcome}` and times them in
 * `flotilla_scheduler_run_duration_seconds{job}`, and wraps each run in a
 * `cron <job name>` span. Unbound, it logs nothing and records nothing.
 *
 * With `coordination.url` (bound with `env.coordinator`), every replica schedules the jobs and
 * asks the coordinator before each fire; the one whose claim wins runs it, the others do nothing
 * (node-cron's `distributed` tasks). A fire the coordinator cannot decide (unreachable, too slow,
 * clocks too far apart) is skipped, logged at warn and counted as `skipped` with its `reason`:
 * never run twice. A replica whose previous run of the job is still going does not claim the fire,
 * so another replica may run it (runs of one job may then overlap across replicas).
 *
 * Lifecycle: `start()` is idempotent; `stop(signal)` is idempotent, starts no
 * new run, and resolves when the running jobs have finished or `signal` has
 * aborted (running jobs' signals abort with it). A stopped scheduler stays
 * stopped: `start()` after `stop()` does nothing — create a new one instead.
 *
 * @example
 * app.registerScheduler(new CronScheduler([
 *   { name: 'purge-sessions', cron: '0 0 * * * *', run: (signal) => sessions.purgeExpired({ signal }) },
 * ]));
 */
export class CronScheduler implements Scheduler {
  /** Every replica runs it and claims each fire: see {@link SchedulerCoordination}. */
  readonly coordination = 'per-fire';
  readonly #jobs: readonly CronJob[];
  readonly #timezone: string | undefined;
  #logger: Logger = silentLogger();
  #metrics: SchedulerMetrics | undefined;
  #tracer: Tracer | undefined;
  #coordinator: FireCoordinator | undefined;
  #state: 'new' | 'started' | 'stopped' = 'new';
  #tasks: ScheduledTask[] = [];
  readonly #running = new Map<string, Run>();

  constructor(jobs: readonly CronJob[], options: CronSchedulerOptions = {}) {
    this.#jobs = validJobs(jobs);
    this.#timezone = validTimezone(options.timezone);
  }

  /** Names of the jobs whose run is in progress. */
  get running(): string[] {
    return [...this.#running.keys()];
  }

  /** Names of every job, in the order given: what {@link runJob} (`app.runScheduled`) can run. */
  get jobNames(): readonly string[] {
    return this.#jobs.map((job) => job.name);
  }

  /**
   * Runs the job `name` once, now, whatever its schedule (`app.runScheduled(name)` calls it): as a
   * fire would, with its span, its scope (`currentContext()` gives `requestId` `job:<name>:<time>`),
   * its log line and its count in the metrics once bound, but claiming no fire from the coordinator.
   * Resolves when the run finishes; rejects with the job's error. Never overlaps the job's own runs:
   * while one is going (a fire, another `runJob`), this waits for it to end, then runs; a fire that
   * comes meanwhile is skipped as an overlap. Its signal aborts as a fire's does: when `stop(signal)`'s
   * signal aborts (for an App, the shutdown deadline). Works before `start()`, not after `stop()`.
   *
   * @example
   * await scheduler.runJob('daily-report'); // in a test: the report was written
   */
  async runJob(name: string): Promise<void> {
    const job = this.#jobs.find((j) => j.name === name);
    if (job === undefined) throw createError('FLO_ERR_UNKNOWN_JOB', { name: JSON.stringify(name), known: describeJobs(this.jobNames) });
    for (let run = this.#running.get(name); run !== undefined; run = this.#running.get(name)) await run.done;
    if (this.#state === 'stopped') {
      throw createError('FLO_ERR_JOB_NOT_RUNNABLE', {
        name: JSON.stringify(name),
        reason: 'its scheduler has stopped (the App is shutting down)',
      });
    }
    const date = new Date();
    const ran = await this.#run(job, Object.freeze({ key: `${job.name}:${date.toISOString()}`, date }), true);
    if (ran?.outcome === 'failure') throw ran.error;
  }

  bind(env: SchedulerEnv): void {
    this.#logger = env.logger.child({ component: 'scheduler' });
    this.#coordinator = env.coordinator;
    this.#metrics = schedulerMetrics(
      env.registry,
      this.#jobs.map((j) => j.name),
      env.coordinator !== undefined,
    );
    this.#tracer = env.tracer;
  }

  start(): void {
    if (this.#state !== 'new') return;
    this.#state = 'started';
    const logger = this.#cronLogger();
    const coordinator = this.#coordinator;
    for (const job of this.#jobs) {
      const options = {
        name: job.name,
        logger,
        ...(this.#timezone === undefined ? {} : { timezone: this.#timezone }),
        ...(coordinator === undefined
          ? {}
          : { distributed: true, runCoordinator: this.#claims(job, coordinator), distributedLease: coordinator.ttlMs }),
      };
      const task = nodeCron().createTask(job.cron, (context) => this.#tick(job, context.date), options);
      this.#tasks.push(task);
      task.start();
    }
  }

  async stop(signal: AbortSignal): Promise<void> {
    this.#state = 'stopped';
    for (const task of this.#tasks) task.destroy();
    this.#tasks = [];
    const runs = [...this.#running.values()];
    if (runs.length === 0) return;
    const abortRuns = () => {
      this.#logger.warn({ jobs: this.running }, 'scheduler stop deadline reached; aborting running jobs');
      for (const run of runs) run.controller.abort(signal.reason);
    };
    if (signal.aborted) {
      abortRuns();
      return;
    }
    this.#logger.info({ jobs: this.running }, 'scheduler stopping; waiting for running jobs');
    const { promise: deadline, resolve } = Promise.withResolvers<void>();
    const onAbort = () => {
      abortRuns();
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([Promise.all(runs.map((r) => r.done)), deadline]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * What node-cron asks before each fire of `job` (its `RunCoordinator`): no claim while stopped or
   * while the previous run goes on; otherwise the coordinator's answer. Never rejects: a fire the
   * coordinator cannot decide is skipped here, logged and counted with its reason.
   */
  #claims(job: CronJob, coordinator: FireCoordinator): RunCoordinator {
    return {
      shouldRun: async (key, ttlMs) => {
        if (this.#state !== 'started') return false;
        if (this.#running.has(job.name)) {
          this.#skipped(job.name, key, 'overlap');
          return false;
        }
        try {
          return await coordinator.shouldRun(key, ttlMs);
        } catch (error) {
          this.#skipped(job.name, key, skipReasonOf(error), error);
          return false;
        }
      },
    };
  }

  #skipped(job: string, fire: string, reason: SkipReason, error?: unknown): void {
    this.#metrics?.runs.inc({ job, outcome: 'skipped', reason });
    const why = {
      overlap: 'its previous run is still running',
      'coordinator-error': 'the coordinator did not answer',
      'clock-skew': "this replica's clock is too far from the coordinator's",
    }[reason];
    this.#logger.warn(
      { job, fire, outcome: 'skipped', reason, ...(error === undefined ? {} : { err: error }) },
      `scheduled job skipped: ${why}`,
    );
  }

  #tick(job: CronJob, date: Date): void {
    if (this.#state !== 'started') return;
    const fire: CronFire = Object.freeze({ key: `${job.name}:${date.toISOString()}`, date });
    if (this.#running.has(job.name)) {
      this.#skipped(job.name, fire.key, 'overlap');
      return;
    }
    void this.#run(job, fire, false);
  }

  /**
   * One run of `job`, recorded as running until it is over and reported; resolves with how it went,
   * or `undefined` when reporting it threw. Never rejects.
   */
  #run(job: CronJob, fire: CronFire, manual: boolean): Promise<Ran | undefined> {
    const controller = new AbortController();
    const { promise: done, resolve } = Promise.withResolvers<void>();
    this.#running.set(job.name, { controller, done });
    return (
      this.#execute(job, controller.signal, fire)
        .then((ran) => {
          this.#running.delete(job.name); // before reporting: once the outcome is logged, the job is not running
          this.#report(job.name, fire.key, ran, manual);
          return ran;
        })
        // a throwing logger, registry or tracer must never surface as an unhandled rejection
        .catch(() => {
          this.#running.delete(job.name);
          return undefined;
        })
        .finally(resolve)
    );
  }

  async #execute(job: CronJob, signal: AbortSignal, fire: CronFire): Promise<Ran> {
    const started = performance.now();
    const span = this.#tracer?.startSpan(
      `cron ${job.name}`,
      { kind: SpanKind.INTERNAL, attributes: { 'flotilla.job.name': job.name } },
      ROOT_CONTEXT,
    );
    const active = span === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, span);
    // the run's own scope: `currentContext()` in the job's code (src/app/core/current-context.ts)
    let scoped: Record<string, unknown> | undefined;
    const scope = {
      context: () =>
        (scoped ??= {
          requestId: `job:${fire.key}`,
          logger: this.#logger.child({ job: job.name, fire: fire.key }),
          signal,
          otel: active,
          state: {},
        }),
    };
    const run = () => runInScope(scope, job.run, signal, fire);
    try {
      await (span === undefined ? run() : context.with(active, run));
      return { outcome: 'success', error: undefined, durationMs: performance.now() - started, span };
    } catch (error) {
      return { outcome: 'failure', error, durationMs: performance.now() - started, span };
    }
  }

  #report(job: string, fire: string, { outcome, error, durationMs: elapsed, span }: Ran, manual: boolean): void {
    const durationMs = Math.round(elapsed * 1000) / 1000;
    this.#metrics?.runs.inc({ job, outcome });
    this.#metrics?.duration.observe({ job }, elapsed / 1000);
    const how = manual ? { manual } : {};
    if (outcome === 'success') {
      this.#logger.info({ job, fire, durationMs, outcome, ...how }, 'scheduled job succeeded');
    } else {
      this.#logger.error({ job, fire, durationMs, outcome, ...how, err: error }, 'scheduled job failed');
      span?.recordException(error instanceof Error ? error : String(error));
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    span?.end();
  }

  /** node-cron's own messages (e.g. missed executions under a blocked event loop) go to the bound logger. */
  #cronLogger(): CronLogger {
    return {
      info: (msg) => this.#logger.info({ source: 'node-cron' }, msg),
      warn: (msg) => this.#logger.warn({ source: 'node-cron' }, msg),
      error: (msg, err) => this.#logger.error({ source: 'node-cron', err: err ?? msg }, String(msg)),
      debug: (msg, err) => this.#logger.debug({ source: 'node-cron', err }, String(msg)),
    };
  }
}

let silent: Logger | undefined;
function silentLogger(): Logger {
  silent ??= pino({ enabled: false });
  return silent;
}

/** A coordinator's rejection carries `reason: 'clock-skew'` when it refused the fire for the clocks; anything else is an error. */
function skipReasonOf(error: unknown): SkipReason {
  return typeof error === 'object' && error !== null && (error as { reason?: unknown }).reason === 'clock-skew'
    ? 'clock-skew'
    : 'coordinator-error';
}

function validJobs(jobs: readonly CronJob[]): readonly CronJob[] {
  if (!Array.isArray(jobs)) throw createError('FLO_ERR_BAD_CRON_JOB', { reason: 'jobs must be an array' });
  const names = new Set<string>();
  return Object.freeze(
    jobs.map((job: Partial<CronJob> | null | undefined, i) => {
      if (typeof job !== 'object' || job === null) throw createError('FLO_ERR_BAD_CRON_JOB', { reason: `job #${i} must be an object` });
      const { name, cron: expression, run } = job;
      if (typeof name !== 'string' || name.trim() === '') {
        throw createError('FLO_ERR_BAD_CRON_JOB', { reason: `job #${i} needs a non-empty string name` });
      }
      if (names.has(name)) throw createError('FLO_ERR_DUPLICATE_CRON_JOB', { name });
      names.add(name);
      if (typeof run !== 'function') throw createError('FLO_ERR_BAD_CRON_JOB', { reason: `job "${name}" needs a run function` });
      if (typeof expression !== 'string' || !nodeCron().validate(expression)) {
        const reason = typeof expression === 'string' ? nodeCron().validateDetailed(expression).errors[0]?.message : 'not a string';
        throw createError('FLO_ERR_BAD_CRON_EXPRESSION', { name, expression: JSON.stringify(expression), reason });
      }
      return Object.freeze({ name, cron: expression, run });
    }),
  );
}

function validTimezone(timezone: string | undefined): string | undefined {
  if (timezone === undefined) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone;
  } catch (error) {
    throw createError('FLO_ERR_BAD_TIME_ZONE', { timezone: JSON.stringify(timezone) }, { cause: error });
  }
}
