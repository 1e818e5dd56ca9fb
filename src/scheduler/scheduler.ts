import type { Tracer } from '@opentelemetry/api';
import type { RunCoordinator } from 'node-cron';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

/**
 * A per-fire coordinator: node-cron's `RunCoordinator`, which a task created with
 * `distributed: true` asks before each fire whether this replica runs it. The key is
 * `${job name}:${scheduled fire time, ISO 8601}`, the same on every replica.
 * `shouldRun` resolves `true` for exactly one caller per key; it rejects when the
 * coordinator cannot be reached or refuses the fire (the fire is then skipped).
 */
export interface FireCoordinator extends RunCoordinator {
  /** `redis` or `postgres`: the `backend` label of the coordination metrics. */
  readonly backend: string;
  /**
   * node-cron's `distributedLease`, passed back as `shouldRun`'s `ttlMs`: a claim is
   * accepted while the coordinator's clock is within `ttlMs / 2` of the fire time, and
   * kept `ttlMs`.
   */
  readonly ttlMs: number;
}

/**
 * What the App hands a scheduler before starting it: where to log, where to
 * register metrics, the tracer to wrap runs in, and, with `coordination.url`,
 * how it shares its work with the other replicas.
 *
 * @example
 * scheduler.bind?.({ logger: app.logger, registry, tracer: app.tracer });
 */
export interface SchedulerEnv {
  logger: Logger;
  registry: Registry;
  tracer: Tracer;
  /** With `coordination.url`, for a scheduler whose `coordination` is `per-fire`: claims each fire for one replica. */
  coordinator?: FireCoordinator;
  /**
   * With `coordination.url`, for a scheduler run under the lease: the fencing token of this
   * holding of the lease, greater than every earlier holder's. Pass it along with writes
   * so that the store can refuse a stale holder's (`WHERE token <= $1`).
   */
  fencingToken?: number;
}

/**
 * How the replicas of a service share a scheduler when `coordination.url` is set:
 * - `lease` (the default): it runs on one replica at a time, the holder of the service's
 *   lease; `start()` is called when this replica takes the lease and `stop(signal)` when it
 *   loses it, so it may be started again after a stop (`bind` comes first each time, with
 *   the new `fencingToken`);
 * - `per-fire`: it runs on every replica and asks `env.coordinator` before each fire
 *   (`CronScheduler`).
 */
export type SchedulerCoordination = 'lease' | 'per-fire';

/**
 * Runs background work on a schedule. The App calls `bind` (when present), then
 * `start()`; its shutdown sequence calls `stop(signal)`, where `signal` aborts
 * at the shutdown deadline. `stop` must start no new work, and should resolve
 * once running work has finished or `signal` has aborted, whichever is first.
 *
 * @example
 * const heartbeat: Scheduler = {
 *   start() { timer = setInterval(beat, 5_000); },
 *   stop() { clearInterval(timer); },
 * };
 * app.registerScheduler(heartbeat);
 */
export interface Scheduler {
  start(): void | Promise<void>;
  stop(signal: AbortSignal): Promise<void> | void;
  /** Optional: receives the App's logger, metrics registry and tracer before `start()`. */
  bind?(env: SchedulerEnv): void;
  /** How replicas share it with `coordination.url` (see {@link SchedulerCoordination}); default `lease`. */
  readonly coordination?: SchedulerCoordination;
  /** Optional, with `runJob`: the names of its jobs, which `app.runScheduled(name)` looks up. */
  readonly jobNames?: readonly string[];
  /**
   * Optional, with `jobNames`: runs the job `name` once, now (`app.runScheduled(name)`); resolves when
   * it finishes, rejects with its error. `CronScheduler` has both.
   */
  runJob?(name: string): Promise<void>;
}
