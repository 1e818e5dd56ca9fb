import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Settings } from '../config/settings.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { createError, describeValue } from '../errors/flotilla-error.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { HealthChecker } from './health.ts';
import type { AppRole, Registrar } from './registrar.ts';
import type { Controller, Middleware, Module, RequestHook, Route } from './route.ts';
import { joinPath } from './router.ts';
import type { ShutdownHook } from './shutdown.ts';

/** Where a group puts its routes: the App's route table. */
/**
 * Adds a route under a prefix with the middlewares and the `onRequest` hooks in force there: the
 * hooks as the arrays of the App and of each enclosing group, so that a hook added later still applies.
 */
export type AddRoute = (route: Route, prefix: string, middlewares: readonly Middleware[], hooks: HookChain) => void;

/** The `onRequest` hook arrays in force for a route, outermost (the App's) first. */
export type HookChain = readonly (readonly RequestHook[])[];

/**
 * Routes under a common prefix and middlewares; groups nest. A group is a
 * {@link Registrar}: routes registered through it (or through a module `use`d
 * on it) get its prefix and middlewares; checkers, schedulers and hooks go to
 * the App (`root`).
 *
 * @example
 * const admin = app.group('/admin', requireAdmin);
 * admin.registerController(new UsersController()); // GET /admin/users …
 * admin.group('/reports', audit).registerController(new ReportsController());
 */
export class Group implements Registrar {
  readonly prefix: string;
  readonly middlewares: readonly Middleware[];
  readonly #root: Registrar;
  readonly #add: AddRoute;
  /** The hooks of the enclosing App and groups, then this group's own. */
  readonly #hooks: HookChain;
  readonly #own: RequestHook[] = [];

  constructor(root: Registrar, add: AddRoute, prefix: string, middlewares: readonly Middleware[], hooks: HookChain = []) {
    checkPrefix(prefix);
    for (const mw of middlewares) if (typeof mw !== 'function') throw createError('FLO_ERR_BAD_MIDDLEWARE', { owner: `group '${prefix}'` });
    this.#root = root;
    this.#add = add;
    this.#hooks = [...hooks, this.#own];
    this.prefix = prefix;
    this.middlewares = middlewares;
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
    for (const route of controller.routes()) this.#add(route, this.prefix, this.middlewares, this.#hooks);
  }

  /** Registers a module whose routes land under this group's prefix and middlewares. */
  use(module: Module): void {
    module.register(this);
  }

  group(prefix: string, ...middlewares: Middleware[]): Group {
    return new Group(this.#root, this.#add, joinPath(this.prefix, prefix), [...this.middlewares, ...middlewares], this.#hooks);
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
}

function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) throw createError('FLO_ERR_BAD_PREFIX', { prefix: String(prefix) });
}

/** Refuses an `onRequest` hook that is not a function, when it is added rather than at the first request. */
export function checkHook(hook: unknown, owner: string): void {
  if (typeof hook !== 'function') throw createError('FLO_ERR_BAD_HOOK', { owner, got: describeValue(hook) });
}
