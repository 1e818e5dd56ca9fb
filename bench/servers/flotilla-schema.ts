/**
 * `bench/schema-cost.ts`: flotilla standalone, `env: production`, no request log line, serving
 * `POST /books` with the schemas of `BENCH_SCHEMA` (json, zod, valibot, arktype, typebox:
 * services/book-schemas.ts), or with none (`none`: the body unchecked, the handler leaves the
 * undeclared key out itself, the reply `JSON.stringify`'d: the reference for what the schemas add).
 */
import { App, type Route } from 'flotilla';
import { bookReply, SCHEMAS, type SchemaWay } from '../services/book-schemas.ts';
import { announce, portArg } from '../services/data.ts';

const way = process.env['BENCH_SCHEMA'] ?? 'json';
const schemas = way === 'none' ? undefined : SCHEMAS[way as SchemaWay];
if (way !== 'none' && schemas === undefined) throw new Error(`BENCH_SCHEMA: no '${way}' (${Object.keys(SCHEMAS).join(', ')}, none)`);

const route: Route = {
  method: 'POST',
  path: '/books',
  ...(schemas === undefined ? {} : { schema: { body: schemas.body, response: { 201: schemas.response } } }),
  handler: (ctx) => {
    ctx.status(201);
    if (schemas !== undefined) return bookReply(ctx.body as object);
    const { internal: _, ...reply } = bookReply(ctx.body as object);
    return reply;
  },
};
const app = new App({ serviceName: 'books', env: 'production', host: '127.0.0.1', port: portArg(), logging: { requests: false } });
app.registerController({ routes: () => [route] });
const listening = app.listen();
announce((await app.ready()).port);
await listening;
