/**
 * The flotilla side of the benchmark: the items routes as a flotilla user
 * would write them, the standalone App the standalone contenders run, and (as
 * the default export) the service module the cluster contender's YAML names.
 */
import { App, type AppOptions, defineService, type JsonSchema, type KConfig, KError, newPage, paginated } from 'flotilla';
import { announce, ITEMS, itemById, ORIGIN } from './data.ts';

const ITEM_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'sku', 'name', 'category', 'price', 'stock'],
  properties: {
    id: { type: 'integer' },
    sku: { type: 'string' },
    name: { type: 'string' },
    category: { type: 'string' },
    price: { type: 'number' },
    stock: { type: 'integer' },
  },
};
const ID_PARAMS: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } };

/** `GET /items` (the `Page<T>` envelope) and `GET /items/:id` (404 problem when missing). */
export function registerItems(app: App): void {
  app.registerController({
    routes: () => [
      paginated(
        {
          method: 'GET',
          path: '/items',
          summary: 'List items',
          handler: (ctx) => {
            const q = ctx.parsePagination();
            const start = (q.page - 1) * q.limit;
            return newPage(ITEMS.slice(start, start + q.limit), ITEMS.length, q.page, q.limit);
          },
        },
        ITEM_SCHEMA,
      ),
      {
        method: 'GET',
        path: '/items/:id',
        summary: 'Get an item',
        schema: { params: ID_PARAMS, response: { 200: ITEM_SCHEMA } },
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

/** Runs a standalone App with the items routes and announces `ready <port>` on stderr. */
export async function runStandalone(config: KConfig, setup: (app: App) => void = () => {}, options: AppOptions = {}): Promise<void> {
  const app = new App(config, options);
  registerItems(app);
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
