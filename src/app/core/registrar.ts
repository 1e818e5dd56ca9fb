import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { SecurityRequirement } from '../../config/security-requirements.ts';
import type { Settings } from '../../config/settings.ts';
import type { ResolvedConfig } from '../../config/types.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import type { ShutdownHook } from '../lifecycle/shutdown.ts';
import type { StartHook } from '../lifecycle/start-hooks.ts';
import type { RateLimitOptions } from './rate-limit-policy.ts';
import type { Middleware, RequestHook, Route } from './route.ts';

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
  /** Routes under `prefix` and middlewares, options (`{ security, rateLimit, onRequest }`) first when given. */
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

/**
 * A set of routes. A route object written inline here gets the untyped `ctx`
 * (TypeScript cannot infer each element of the returned array on its own):
 * wrap it in `defineRoute(…)` to type its handler from its path and schemas.
 *
 * @example
 * class BooksController implements Controller {
 *   routes(): Route[] {
 *     return [
 *       { method: 'GET', path: '/books', handler: (ctx) => ctx.ok([]) },
 *       defineRoute({ method: 'GET', path: '/books/:id', handler: (ctx) => repo.get(ctx.params.id) }), // id: string
 *     ];
 *   }
 * }
 */
export interface Controller {
  routes(): Route[];
}

/**
 * A unit of features registered on an App or a group (routes, checkers, hooks,
 * schedulers). It receives a {@link Registrar}: registration only, never
 * `listen` or `close`.
 *
 * @example
 * const booksModule: Module = { register(r) { r.registerController(new BooksController()); } };
 */
export interface Module {
  register(registrar: Registrar): void;
}

/**
 * Options of a group, given before its middlewares.
 *
 * @example
 * const admin = app.group('/admin', { security: [{ bearer: [] }] }, requireAdmin);
 * const notes = app.group('/notes', { onRequest: [loadUser] }); // loadUser: RequestHook<{ user: User }>
 */
export interface GroupOptions {
  /**
   * The `security` of the group's routes (and its subgroups') that declare none (see `Route.security`);
   * a subgroup's own replaces it. Each scheme must be declared in `docs.securitySchemes`.
   */
  security?: readonly SecurityRequirement[];
  /**
   * A rate limit shared by the group's routes (and its subgroups'), unless a subgroup or a route sets
   * its own (see `Route.rateLimit`); `false`: none, not even the App's.
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * `onRequest` hooks of the group's routes (and its subgroups'), run as `group.onRequest(hook)`
   * runs them: after the App's and the enclosing groups'. A `RequestHook<S>` here types `S` in
   * the state of the group's routes (see `app.group`).
   */
  onRequest?: readonly RequestHook[];
}

/**
 * What `group(prefix, …)` takes after the prefix: its middlewares, optionally preceded by its options.
 *
 * @example
 * app.group('/api', audit, timing); // middlewares only
 * app.group('/api', { security: [{ apiKey: [] }] }, audit); // options first
 * app.group('/api', { rateLimit: { max: 100, windowMs: 60_000 } }, authenticate);
 */
export type GroupArgs = [options: GroupOptions, ...middlewares: Middleware[]] | Middleware[];

/**
 * A dependency check run by `GET /health`: resolving means healthy, throwing
 * (or exceeding the timeout) means failing.
 *
 * @example
 * app.registerHealthChecker({ name: 'db', check: (signal) => pool.query('select 1', { signal }) });
 */
export interface HealthChecker {
  name: string;
  check(signal: AbortSignal): Promise<void>;
}
