import type { NotFoundHandler, Route } from '../core/route.ts';
import { staticRoutes } from './serve-static.ts';
import type { StaticOptions } from './static-options.ts';

/** `app.serveStatic`: a mount of `dir`'s files under `prefix`. */
export type ServeStatic = (prefix: string, dir: string, options: StaticOptions | undefined) => void;

/**
 * An App's static files: returns `app.serveStatic`, which makes a mount's routes (serve-static.ts)
 * and routes each through `add`, the App's routing with its `onRequest` hooks and rate limit (`mount`:
 * the wildcard that serves the directory, see `RouteRegistration.mount`). A path the mount does not
 * serve is answered by the App's not-found handler, read from `handlers` per request: one set after
 * the call answers too.
 *
 * @example
 * const serveStatic = installStatic(seams, (route, mount) => addRoute(route, '', [], [requestHooks], { rateLimit, mount }));
 * serveStatic('/assets', 'dist/assets', { maxAgeS: 3600 });
 */
export function installStatic(
  handlers: { readonly notFoundHandler?: NotFoundHandler | undefined },
  add: (route: Route, mount: boolean) => void,
): ServeStatic {
  const host = {
    get notFoundHandler() {
      return handlers.notFoundHandler;
    },
  };
  return (prefix, dir, options) => {
    for (const route of staticRoutes(prefix, dir, options, host)) add(route, route.path.endsWith('/*'));
  };
}
