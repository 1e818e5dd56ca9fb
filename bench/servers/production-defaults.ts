/**
 * The server of `bench/production-defaults-cost.ts`: flotilla standalone as a production service runs it
 * behind one proxy (`env: production`, no request log line, CORS with one allowed origin, `trustProxy: 1`),
 * with the items routes and `POST /items`, which answers 201 with the JSON body it got. The same file runs
 * on both sides of the comparison, each importing `flotilla` from its own compiled package.
 */
import { portArg } from '../services/data.ts';
import { itemsConfig, runStandalone } from '../services/items.ts';

await runStandalone(itemsConfig(portArg(), { env: 'production', logging: { requests: false }, trustProxy: 1 }), (app) =>
  app.registerController({
    routes: () => [{ method: 'POST', path: '/items', summary: 'Add an item', handler: (ctx) => ctx.created(ctx.body) }],
  }),
);
