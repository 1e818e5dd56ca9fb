import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Settings } from '../config/settings.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { createError } from '../errors/flotilla-error.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { HealthChecker } from './health.ts';
import type { AppRole, Registrar } from './registrar.ts';
import type { Controller, Middleware, Module, Route } from './route.ts';
import { joinPath } from './router.ts';
import type { ShutdownHook } from './shutdown.ts';

/** Where a group puts its routes: the App's route table. */
export type AddRoute = (route: Route, prefix: string, middlewares: readonly Middleware[]) => void;

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

  constructor(root: Registrar, add: AddRoute, prefix: string, middlewares: readonly Middleware[]) {
    checkPrefix(prefix);
    for (const mw of middlewares) if (typeof mw !== 'function') throw createError('FLO_ERR_BAD_MIDDLEWARE', { owner: `group '${prefix}'` });
    this.#root = root;
    this.#add = add;
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
    for (const route of controller.routes()) this.#add(route, this.prefix, this.middlewares);
  }

  /** Registers a module whose routes land under this group's prefix and middlewares. */
  use(module: Module): void {
    module.register(this);
  }

  group(prefix: string, ...middlewares: Middleware[]): Group {
    return new Group(this.#root, this.#add, joinPath(this.prefix, prefix), [...this.middlewares, ...middlewares]);
  }

  registerHealthChecker(checker: HealthChecker): void {
    this.#root.registerHealthChecker(checker);
  }

  registerScheduler(scheduler: Scheduler): void {
    this.#root.registerScheduler(scheduler);
  }

  onShutdown(hook: ShutdownHook): void {
    this.#root.onShutdown(hook);
  }
}

function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) throw createError('FLO_ERR_BAD_PREFIX', { prefix: String(prefix) });
}
