import type { App } from './app.ts';
import type { Controller, Middleware, Module, Route } from './route.ts';
import { joinPath } from './router.ts';

/** Where a group puts its routes: the App's route table. */
export type AddRoute = (route: Route, prefix: string, middlewares: readonly Middleware[]) => void;

/**
 * Routes under a common prefix and middlewares; groups nest.
 *
 * @example
 * const admin = app.group('/admin', requireAdmin);
 * admin.registerController(new UsersController()); // GET /admin/users …
 * admin.group('/reports', audit).registerController(new ReportsController());
 */
export class Group {
  readonly prefix: string;
  readonly middlewares: readonly Middleware[];
  readonly #app: App;
  readonly #add: AddRoute;

  constructor(app: App, add: AddRoute, prefix: string, middlewares: readonly Middleware[]) {
    checkPrefix(prefix);
    for (const mw of middlewares) if (typeof mw !== 'function') throw new TypeError(`group '${prefix}': middlewares must be functions`);
    this.#app = app;
    this.#add = add;
    this.prefix = prefix;
    this.middlewares = middlewares;
  }

  registerController(controller: Controller): void {
    for (const route of controller.routes()) this.#add(route, this.prefix, this.middlewares);
  }

  /** Registers a module whose routes land under this group's prefix and middlewares. */
  use(module: Module): void {
    module.register(scoped(this.#app, this));
  }

  group(prefix: string, ...middlewares: Middleware[]): Group {
    return new Group(this.#app, this.#add, joinPath(this.prefix, prefix), [...this.middlewares, ...middlewares]);
  }
}

function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !prefix.startsWith('/'))
    throw new TypeError(`group prefix must start with '/', got '${String(prefix)}'`);
}

/** The App as a module registered in a group sees it: routing goes through the group, the rest is the App's. */
function scoped(app: App, group: Group): App {
  const routing: Record<PropertyKey, unknown> = {
    registerController: (c: Controller) => group.registerController(c),
    use: (m: Module) => group.use(m),
    group: (prefix: string, ...mws: Middleware[]) => group.group(prefix, ...mws),
  };
  return new Proxy(app, {
    get(target, prop) {
      if (Object.hasOwn(routing, prop)) return routing[prop];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
