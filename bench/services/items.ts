/**
 * The flotilla side of the benchmark: the items routes as a flotilla user
 * would write them, the standalone App the standalone contenders run, and (as
 * the default export) the service module the cluster contender's YAML names.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  App,
  type AppOptions,
  defineService,
  type JsonSchema,
  type KConfig,
  KError,
  newPage,
  pageSchema,
  paginated,
  type Route,
} from 'flotilla';
import { announce, ITEMS, itemById, ORIGIN } from './data.ts';
import { ITEM_SCHEMA, PAGE_SCHEMA } from './schemas.ts';

const ID_PARAMS: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } };
// Fastify's side is given PAGE_SCHEMA: the comparison holds only if it is what paginated() declares
if (!isDeepStrictEqual(pageSchema(ITEM_SCHEMA), PAGE_SCHEMA))
  throw new Error('bench/services/schemas.ts: PAGE_SCHEMA is not pageSchema(ITEM_SCHEMA)');

/**
 * `GET /items` (the `Page<T>` envelope) and `GET /items/:id` (404 problem when
 * missing). With `responseSchemas` (the default, as a user writes them) the list
 * is `paginated()` and the item declares its 200 schema, so the replies go
 * through the response serializer; without, neither declares a response and
 * the replies are `JSON.stringify`'d.
 */
export function registerItems(app: App, responseSchemas = true): void {
  const list: Route = {
    method: 'GET',
    path: '/items',
    summary: 'List items',
    handler: (ctx) => {
      const q = ctx.parsePagination();
      const start = (q.page - 1) * q.limit;
      return newPage(ITEMS.slice(start, start + q.limit), ITEMS.length, q.page, q.limit);
    },
  };
  app.registerController({
    routes: () => [
      responseSchemas ? paginated(list, ITEM_SCHEMA) : list,
      {
        method: 'GET',
        path: '/items/:id',
        summary: 'Get an item',
        schema: responseSchemas ? { params: ID_PARAMS, response: { 200: ITEM_SCHEMA } } : { params: ID_PARAMS },
        handler: (ctx) => {
          const id = ctx.params['id'] as number;
          const item = itemById(id);
          if (item === undefined) throw KError.notFound(`item ${id} does not exist`);
          return item;
        },
      },
    ],
  });
}

/** The config every flotilla contender shares (the cluster YAML says the same). */
export function itemsConfig(port: number, overrides: KConfig = {}): KConfig {
  return { serviceName: 'items', host: '127.0.0.1', port, cors: { origins: [ORIGIN] }, ...overrides };
}

/** Runs a standalone App with the items routes (see `registerItems`) and announces `ready <port>` on stderr. */
export async function runStandalone(
  config: KConfig,
  setup: (app: App) => void = () => {},
  options: AppOptions = {},
  responseSchemas = true,
): Promise<void> {
  const app = new App(config, options);
  registerItems(app, responseSchemas);
  setup(app);
  const listening = app.listen();
  announce((await app.ready()).port);
  await listening;
}

/** In a cluster worker, says `ready <port>` on stderr once listening (the orchestrator counts the workers so). */
export function announceWorker(app: App): void {
  if (app.role === 'worker') void app.ready().then(({ port }) => announce(port));
}

export default defineService((app) => {
  registerItems(app);
  announceWorker(app);
});
