import { createError } from '../../errors/flotilla-error.ts';
import { runScheduledJob } from '../../scheduler/run-scheduled.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import type { StartParts } from './lifecycle.ts';
import type { StartedSchedulers } from './schedulers.ts';
import type { ShutdownHook } from './shutdown.ts';
import { checkStartHook, noteStartHooks, type StartHook } from './start-hooks.ts';

/** An App's schedulers and `beforeServe` hooks, as its facade uses them. */
export interface AppSchedulers {
  /** What the lifecycle's `listen` runs: the `beforeServe` hooks before binding, the schedulers' start once bound. */
  readonly start: StartParts;
  /** `app.registerScheduler`: recorded with a shutdown hook that stops it, unless the App runs no scheduler. */
  register(scheduler: Scheduler): void;
  /** `app.runScheduled`: `FLO_ERR_JOB_NOT_RUNNABLE` in an App that runs no scheduler. */
  run(name: string): Promise<void>;
  /** `app.beforeServe`: checked, then recorded, or only noted for `app` when the App runs no scheduler (see `awaitsStartHooks`). */
  beforeServe(hook: StartHook, app: object): void;
}

/**
 * An App's schedulers and `beforeServe` hooks (`AppOptions.runSchedulers`: a cluster worker runs none, its
 * primary's service thread does). The start is handed in, so that nothing here imports where the
 * schedulers run (src/coordination/start.ts, across replicas with `coordination.url`); a scheduler's
 * shutdown hook stops it through `stop` (the lifecycle's `stopScheduler`: through what the start
 * returned, else by its own `stop`).
 *
 * @example
 * const schedulers = installSchedulers({ runs: true, shutdownHooks, start: (list) => startSchedulers(list, env, config), stop });
 * new Lifecycle({ …, start: schedulers.start });
 * schedulers.register(new CronScheduler(jobs));
 */
export function installSchedulers(parts: {
  /** Run the schedulers and the `beforeServe` hooks (`AppOptions.runSchedulers`). */
  readonly runs: boolean;
  /** The App's shutdown hooks: a registered scheduler's stop is appended. */
  readonly shutdownHooks: ShutdownHook[];
  /** Binds and starts the schedulers registered, once the App listens. */
  readonly start: (schedulers: readonly Scheduler[]) => Promise<StartedSchedulers>;
  /** Stops one of them at the shutdown. */
  readonly stop: (scheduler: Scheduler, signal: AbortSignal) => Promise<void> | void;
}): AppSchedulers {
  const { runs, shutdownHooks, stop } = parts;
  const schedulers: Scheduler[] = [];
  const startHooks: StartHook[] = [];
  return {
    start: { hooks: startHooks, schedulers: () => parts.start(schedulers) },
    register(scheduler) {
      if (!runs) return;
      schedulers.push(scheduler);
      shutdownHooks.push((signal) => stop(scheduler, signal));
    },
    run(name) {
      if (!runs) {
        const reason = 'this App runs no scheduler (runSchedulers: false; in a cluster worker, the primary runs them)';
        return Promise.reject(createError('FLO_ERR_JOB_NOT_RUNNABLE', { name: JSON.stringify(name), reason }));
      }
      return runScheduledJob(schedulers, name);
    },
    beforeServe(hook, app) {
      checkStartHook(hook);
      if (runs) startHooks.push(hook);
      else noteStartHooks(app);
    },
  };
}
