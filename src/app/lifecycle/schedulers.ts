import type { Scheduler } from '../../scheduler/scheduler.ts';

/** The App's schedulers once started: how each one stops (its shutdown hook). */
export interface StartedSchedulers {
  stop(scheduler: Scheduler, signal: AbortSignal): Promise<void>;
}

/**
 * Binds and starts the App's schedulers once it listens, and tells how each one stops. The App hands
 * it to the lifecycle, which knows nothing of where the schedulers run: a standalone App's is
 * `startSchedulers` of src/coordination/start.ts over its schedulers (across replicas with
 * `coordination.url`).
 *
 * @example
 * const start: StartSchedulers = () => startSchedulers(schedulers, { logger, registry, tracer }, config);
 */
export type StartSchedulers = () => Promise<StartedSchedulers>;
