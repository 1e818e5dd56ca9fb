import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

/**
 * What the App hands a scheduler before starting it: where to log, where to
 * register metrics, and the tracer to wrap runs in.
 *
 * @example
 * scheduler.bind?.({ logger: app.logger, registry, tracer: app.tracer });
 */
export interface SchedulerEnv {
  logger: Logger;
  registry: Registry;
  tracer: Tracer;
}

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
}
