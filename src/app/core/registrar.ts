import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Settings } from '../../config/settings.ts';
import type { ResolvedConfig } from '../../config/types.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import type { HealthChecker } from '../health/health.ts';
import type { ShutdownHook } from '../transport/shutdown.ts';
import type { StartHook } from '../transport/start-hooks.ts';
import type { GroupArgs } from './group.ts';
import type { Controller, Module, RequestHook } from './route.ts';

/** Where the service's setup runs: alone, in the cluster's primary (its service thread), or in a cluster worker. */
export type AppRole = 'standalone' | 'primary' | 'worker';

/**
 * What a module, a group and the service's setup register things with: the
 * App, a `Group` (routes under its prefix and middlewares, everything else
 * on the App), or, in the cluster's primary, the service part that keeps only
 * schedulers and shutdown hooks. Like fastify's child instances, every
 * registrar has the same registration API; none can listen or close.
 *
 * @example
 * const books: Module = { register(r: Registrar) { r.registerController(controller); r.onShutdown(close) } };
 */
export interface Registrar {
  readonly config: ResolvedConfig;
  /** The config's `settings`, validated by the service's schema and with its defaults once its setup runs (`defineService`). */
  readonly settings: Settings;
  readonly logger: Logger;
  /** The prom-client registry the service's own metrics go in. */
  readonly registry: Registry;
  /** Where the setup runs; information only: it changes nothing in how things are registered. */
  readonly role: AppRole;
  registerController(controller: Controller): void;
  use(module: Module): void;
  /** Routes under `prefix` and middlewares, options (`{ security, rateLimit }`) first when given. */
  group(prefix: string, ...args: GroupArgs): Registrar;
  registerHealthChecker(checker: HealthChecker): void;
  registerScheduler(scheduler: Scheduler): void;
  onShutdown(hook: ShutdownHook): void;
  /**
   * Work done once per process tree before any request is served: in a cluster, in the primary's
   * service thread, the workers listening once it is done; standalone, before `listen` binds. A
   * cluster worker runs none.
   */
  beforeServe(hook: StartHook): void;
  /** Adds an `onRequest` hook: App-wide, or for the routes of a group (those added before and after it). */
  onRequest(hook: RequestHook): void;
  /**
   * Sends `data` to every WebSocket subscribed to `topic` (`ctx.subscribe`): on every worker of the
   * cluster and, with `coordination.url`, every replica. A string goes as a text message, bytes as a
   * binary one, anything else as JSON. At most once, in publish order per publisher.
   */
  publish(topic: string, data: unknown): void;
}
