import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { SecurityRequirement } from '../../config/security-requirements.ts';
import { checkSecurity } from '../../config/security-requirements.ts';
import type { Settings } from '../../config/settings.ts';
import type { ResolvedConfig } from '../../config/types.ts';
import { createError } from '../../errors/flotilla-error.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import { isRecord } from '../../utils/is-record.ts';
import type { ShutdownHook } from '../lifecycle/shutdown.ts';
import type { StartHook } from '../lifecycle/start-hooks.ts';
import { checkHook, type HookChain } from './hooks.ts';
import { type RateLimitPolicy, rateLimitPolicy } from './rate-limit-policy.ts';
import type { AppRole, Controller, GroupArgs, GroupOptions, HealthChecker, Module, Registrar } from './registrar.ts';
import { joinPath, type Middleware, type RequestHook, type Route } from './route.ts';

/** Where a group puts its routes: the App's route table. */
/**
 * Adds a route under a prefix with the middlewares and the `onRequest` hooks in force there: the
 * hooks as the arrays of the App and of each enclosing group, so that a hook added later still applies.
 */
export type AddRoute = (
  route: Route,
  prefix: string,
  middlewares: readonly Middleware[],
  hooks: HookChain,
  rateLimit: RateLimitPolicy | false | undefined,
) => void;

const GROUP_OPTIONS: readonly string[] = ['security', 'rateLimit', 'onRequest'] satisfies (keyof GroupOptions)[];

/**
 * Splits `group(prefix, …)`'s arguments into its options (a plain object first) and its middlewares.
 *
 * @example
 * groupArgs([{ security: [] }, audit]); // { options: { security: [] }, middlewares: [audit] }
 */
export function groupArgs(prefix: string, args: GroupArgs): { options: GroupOptions; middlewares: Middleware[] } {
  const [first, ...rest] = args;
  if (!isRecord(first)) return { options: {}, middlewares: args as Middleware[] };
  for (const key of Object.keys(first)) {
    if (!GROUP_OPTIONS.includes(key)) {
      throw createError('FLO_ERR_BAD_GROUP_OPTION', {
        prefix: String(prefix),
        reason: `unknown option '${key}' (known: ${GROUP_OPTIONS.join(', ')})`,
      });
    }
  }
  if (first['onRequest'] !== undefined && !Array.isArray(first['onRequest'])) {
    throw createError('FLO_ERR_BAD_GROUP_OPTION', { prefix: String(prefix), reason: "'onRequest' is a list of hooks" });
  }
  return { options: first as GroupOptions, middlewares: rest as Middleware[] };
}

/**
 * Routes under a common prefix and middlewares; groups nest. A group is a
 * {@link Registrar}: routes registered through it (or through a module `use`d
 * on it) get its prefix and middlewares; checkers, schedulers and hooks go to
 * the App (`root`).
 *
 * @example
 * const admin = app.group('/admin', requireAdmin);
 * admin.registerController(new UsersController()); // GET /admin/users …
 * const api = app.group('/api', { security: [{ apiKey: [] }] }); // documented: every route needs the key
 * admin.group('/reports', audit).registerController(new ReportsController());
 * admin.route({ method: 'GET', path: '/stats', handler: () => stats() }); // GET /admin/stats
 */
export class Group implements Registrar {
  readonly prefix: string;
  readonly middlewares: readonly Middleware[];
  readonly #root: Registrar;
  readonly #add: AddRoute;
  /** The hooks of the enclosing App and groups, then this group's own. */
  readonly #hooks: HookChain;
  readonly #own: RequestHook[] = [];
  /** The rate limit of its routes: its own, else the enclosing group's or the App's. */
  readonly #rateLimit: RateLimitPolicy | false | undefined;
  /** The `security` of its routes that declare none: its own option, else the enclosing group's. */
  readonly security: readonly SecurityRequirement[] | undefined;

  constructor(
    root: Registrar,
    add: AddRoute,
    prefix: string,
    middlewares: readonly Middleware[],
    hooks: HookChain = [],
    security?: readonly SecurityRequirement[],
    rateLimit: { option?: unknown; inherited?: RateLimitPolicy | false | undefined } = {},
    onRequest: readonly RequestHook[] = [],
  ) {
    checkPrefix(prefix);
    for (const mw of middlewares) if (typeof mw !== 'function') throw createError('FLO_ERR_BAD_MIDDLEWARE', { owner: `group '${prefix}'` });
    if (security !== undefined) checkSecurity(security, root.config.docs.securitySchemes, `group '${prefix}'`);
    const own = rateLimitPolicy(rateLimit.option, prefix, `group '${prefix}'`);
    this.#rateLimit = own === undefined ? rateLimit.inherited : own;
    this.#root = root;
    this.#add = add;
    this.#hooks = [...hooks, this.#own];
    this.prefix = prefix;
    this.middlewares = middlewares;
    this.security = security;
    for (const hook of onRequest) this.onRequest(hook);
  }

  get config(): ResolvedConfig {
    return this.#root.config;
  }

  get settings(): Settings {
    return this.#root.settings;
  }

  get logger(): Logger {
    return this.#root.logger;
  }

  get registry(): Registry {
    return this.#root.registry;
  }

  get role(): AppRole {
    return this.#root.role;
  }

  registerController(controller: Controller): void {
    for (const route of controller.routes()) this.route(route);
  }

  /**
   * Registers one route under this group's prefix, middlewares and hooks. Through `app.group`, its
   * handler is typed with the state the group's middlewares and hooks declare, its params and
   * schemas as `defineRoute` types them (src/app/typed/typed-group.ts).
   */
  route(route: Route): void {
    this.#add(this.#withSecurity(route), this.prefix, this.middlewares, this.#hooks, this.#rateLimit);
  }

  /** Returns `route` unchanged, to register later (`registerController`); typed as `route` is, through `app.group`. */
  defineRoute(route: Route): Route {
    return route;
  }

  /** Registers a module whose routes land under this group's prefix and middlewares. */
  use(module: Module): void {
    module.register(this);
  }

  /** A subgroup: this group's prefix, middlewares, hooks, `security` and rate limit, then its own (see {@link GroupOptions}). */
  group(prefix: string, ...args: GroupArgs): Group {
    const full = joinPath(this.prefix, prefix);
    const { options, middlewares } = groupArgs(full, args);
    const rateLimit = { option: options.rateLimit, inherited: this.#rateLimit };
    return new Group(
      this.#root,
      this.#add,
      full,
      [...this.middlewares, ...middlewares],
      this.#hooks,
      options.security ?? this.security,
      rateLimit,
      options.onRequest,
    );
  }

  /** An `onRequest` hook for this group's routes (and its subgroups'), after the App's and the enclosing groups'. */
  onRequest(hook: RequestHook): void {
    checkHook(hook, `group '${this.prefix}'`);
    this.#own.push(hook);
  }

  registerHealthChecker(checker: HealthChecker): void {
    this.#root.registerHealthChecker(checker);
  }

  registerScheduler(scheduler: Scheduler): void {
    this.#root.registerScheduler(scheduler);
  }

  publish(topic: string, data: unknown): void {
    this.#root.publish(topic, data);
  }

  onShutdown(hook: ShutdownHook): void {
    this.#root.onShutdown(hook);
  }

  /** The route with the group's `security` when it declares none of its own. */
  #withSecurity(route: Route): Route {
    if (this.security === undefined || typeof route !== 'object' || route === null || route.security !== undefined) return route;
    return { ...route, security: this.security };
  }

  beforeServe(hook: StartHook): void {
    this.#root.beforeServe(hook);
  }
}

function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) throw createError('FLO_ERR_BAD_PREFIX', { prefix: String(prefix) });
}
