/**
 * The App of the production-defaults benchmarks: flotilla standalone as a production service runs it
 * behind one proxy (`env: production`, no request log line, CORS with one allowed origin, `trustProxy: 1`),
 * with the items routes and `POST /items`, which answers 201 with the JSON body it got. Compiled into each
 * side's package, so that each builds it with its own flotilla.
 */
import type { App, KConfig } from 'flotilla';
import { itemsConfig, registerItems } from './items.ts';

/** The config of both sides, on `port`. */
export function productionDefaultsConfig(port: number): KConfig {
  return itemsConfig(port, { env: 'production', logging: { requests: false }, trustProxy: 1 });
}

/** `POST /items`, answered 201 with the body it got. */
export function registerPostItems(app: App): void {
  app.registerController({
    routes: () => [{ method: 'POST', path: '/items', summary: 'Add an item', handler: (ctx) => ctx.created(ctx.body) }],
  });
}

/** The whole App, without listening: what `bench/production-defaults-inject.ts` runs requests through. */
export function productionDefaultsApp(AppClass: typeof App): App {
  const app = new AppClass(productionDefaultsConfig(0));
  registerItems(app);
  registerPostItems(app);
  return app;
}
