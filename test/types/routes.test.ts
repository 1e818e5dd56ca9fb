import type { IncomingHttpHeaders } from 'node:http';
import { type TestContext, test } from 'node:test';
import { expectTypeOf } from 'expect-type';
import {
  type Controller,
  type Ctx,
  defineRoute,
  defineService,
  type HandlerResult,
  KError,
  type Middleware,
  newPage,
  type Page,
  type PathParams,
  paginated,
  type ReplyType,
  type RequestState,
  type Route,
  type SchemaType,
} from '../../src/index.ts';
import { controller, testApp } from '../helpers/app.ts';

/*
 * Type tests: `npm test`'s typecheck (tsc over test/) is what checks them. Each
 * `expectTypeOf` asserts an inferred type; each `@ts-expect-error` asserts that
 * a wrong use does not compile (tsc fails on one that compiles). The node:test
 * part checks that the values at run time are what the types say.
 */

const Book = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'title'],
  properties: { id: { type: 'integer' }, title: { type: 'string' }, shelf: { type: 'string', default: 'new' } },
} as const;
type Book = SchemaType<typeof Book>;

const ID_PARAMS = { type: 'object', properties: { id: { type: 'integer', minimum: 1 } } } as const;

expectTypeOf<Book>().toEqualTypeOf<{ id: number; title: string; shelf: string }>();

// path parameters without a schema: strings, from the path
expectTypeOf<PathParams<'/books/:id'>>().toEqualTypeOf<{ id: string }>();
expectTypeOf<PathParams<'/shelves/:shelf/books/:id'>>().toEqualTypeOf<{ shelf: string; id: string }>();
expectTypeOf<PathParams<'/files/*'>>().toEqualTypeOf<{ '*': string }>();
expectTypeOf<PathParams<'/books/:id?'>>().toEqualTypeOf<{ id?: string }>();
expectTypeOf<PathParams<'/flights/:from-:to'>>().toEqualTypeOf<{ from: string; to: string }>();
expectTypeOf<PathParams<'/reports/:name.pdf'>>().toEqualTypeOf<{ name: string }>();
expectTypeOf<PathParams<'/time::now/:id(^\\d+(?:x)?$)/:part'>>().toEqualTypeOf<{ id: string; part: string }>();
expectTypeOf<PathParams<'/health'>>().toEqualTypeOf<Record<never, never>>();
expectTypeOf<PathParams<string>>().toEqualTypeOf<Record<string, string>>();

// the untyped Ctx keeps its defaults
expectTypeOf<Ctx['params']>().toEqualTypeOf<Record<string, unknown>>();
expectTypeOf<Ctx['query']>().toEqualTypeOf<Record<string, unknown>>();
expectTypeOf<Ctx['headers']>().toEqualTypeOf<IncomingHttpHeaders>();
expectTypeOf<Ctx['body']>().toEqualTypeOf<unknown>();
expectTypeOf<Ctx['state']>().toEqualTypeOf<RequestState>();
expectTypeOf<Ctx['state']['anything']>().toEqualTypeOf<unknown>();

export const fromThePath = defineRoute({
  method: 'GET',
  path: '/shelves/:shelf/books/:id',
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ shelf: string; id: string }>();
    expectTypeOf(ctx.query).toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(ctx.body).toEqualTypeOf<unknown>();
    // @ts-expect-error the path has no such parameter
    void ctx.params.title;
    return { shelf: ctx.params.shelf, id: ctx.params.id }; // no response schema: anything goes
  },
});

export const getBook = defineRoute({
  method: 'GET',
  path: '/books/:id',
  schema: {
    params: ID_PARAMS,
    querystring: { type: 'object', properties: { fields: { type: 'string' }, depth: { type: 'integer', default: 1 } } },
    headers: { type: 'object', required: ['x-api-version'], properties: { 'x-api-version': { type: 'integer' } } },
    response: { 200: Book, 404: { type: 'object', properties: { missing: { type: 'boolean' } } } },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ fields?: string; depth: number }>();
    expectTypeOf(ctx.headers['x-api-version']).toEqualTypeOf<number>();
    expectTypeOf(ctx.headers.authorization).toEqualTypeOf<string | undefined>();
    expectTypeOf(ctx.headers['x-undeclared']).toEqualTypeOf<string | string[] | undefined>();
    // @ts-expect-error the id is an integer, not a string
    const id: string = ctx.params.id;
    // @ts-expect-error the query string declares no `page`
    void ctx.query.page;
    void id;
    if (ctx.params.id > 100) throw KError.notFound('no such book');
    return { id: ctx.params.id, title: 'The Dispossessed' }; // `shelf` has a default: it may be left out
  },
});

// the returned value is checked against the 2xx response schemas
defineRoute({
  method: 'GET',
  path: '/books/:id',
  schema: { params: ID_PARAMS, response: { 200: Book } },
  // @ts-expect-error `title` is required by the 200 schema
  handler: (ctx) => ({ id: ctx.params.id }),
});
defineRoute({
  method: 'GET',
  path: '/books/:id',
  schema: { response: { 200: Book } },
  // @ts-expect-error a title is a string
  handler: () => ({ id: 1, title: 165 }),
});
defineRoute({
  method: 'GET',
  path: '/books/:id',
  schema: { response: { 200: Book } },
  // @ts-expect-error a promise of the wrong body is wrong too
  handler: async () => ({ title: 'Invisible Cities' }),
});
defineRoute({
  method: 'GET',
  path: '/books/:id',
  schema: { response: { '2XX': Book, 400: { type: 'string' } } },
  // @ts-expect-error only the 2xx schemas count: a string is the 400's
  handler: () => 'bad request',
});

export const addBook = defineRoute({
  method: 'POST',
  path: '/books',
  schema: {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['title'],
      properties: { title: { type: 'string' }, year: { type: 'integer' } },
    },
    response: { 201: Book },
  },
  handler: async (ctx) => {
    expectTypeOf(ctx.body).toEqualTypeOf<{ title: string; year?: number }>();
    // @ts-expect-error the body declares no `author`
    void ctx.body.author;
    const book: Book = { id: 3, title: ctx.body.title, shelf: 'new' };
    ctx.setHeader('Location', `/books/${book.id}`).created(book); // undefined: the reply is chosen on ctx
  },
});

export const noContent = defineRoute({
  method: 'DELETE',
  path: '/books/:id',
  schema: { response: { 204: { type: 'null' } } },
  handler: (ctx) => ctx.status(204), // the ctx a chained call returns is no body
});

// a schema TypeScript sees only as Record<string, unknown> types nothing
const untypedSchema: Record<string, unknown> = { type: 'object' };
defineRoute({
  method: 'POST',
  path: '/anything/:id',
  schema: { params: untypedSchema, querystring: untypedSchema, body: untypedSchema, response: { 200: untypedSchema } },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: string }>();
    expectTypeOf(ctx.query).toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(ctx.body).toEqualTypeOf<unknown>();
    return 42;
  },
});

// ctx.state: typed by the middlewares that set it
interface User {
  name: string;
}
const authenticate: Middleware<{ user: User }> = async (ctx, next) => {
  ctx.state.user = { name: 'ursula' };
  await next();
};
const tenancy: Middleware<{ tenant: string }> = async (ctx, next) => {
  expectTypeOf(ctx.state.tenant).toEqualTypeOf<string>();
  ctx.state.tenant = 'acme';
  await next();
};
const timing: Middleware = async (_ctx, next) => {
  await next();
};
export const me = defineRoute({
  method: 'GET',
  path: '/me',
  middlewares: [timing, authenticate, tenancy],
  handler: (ctx) => {
    expectTypeOf(ctx.state.user).toEqualTypeOf<User>();
    expectTypeOf(ctx.state.tenant).toEqualTypeOf<string>();
    expectTypeOf(ctx.state['undeclared']).toEqualTypeOf<unknown>();
    return { name: ctx.state.user.name, tenant: ctx.state.tenant };
  },
});
defineRoute({
  method: 'GET',
  path: '/you',
  middlewares: [timing],
  handler: (ctx) => {
    expectTypeOf(ctx.state).toEqualTypeOf<RequestState>();
    // @ts-expect-error no middleware of this route sets a user
    return ctx.state.user.name;
  },
});
// a Middleware<S> is a Middleware: groups and plain routes take it
expectTypeOf(authenticate).toExtend<Middleware>();
export const plainRoute: Route = { method: 'GET', path: '/plain', middlewares: [authenticate, timing], handler: () => 'plain' };

// paginated(): the handler returns Page<Item>
const books: Book[] = [{ id: 1, title: 'The Dispossessed', shelf: 'sf' }];
export const listBooks = paginated(
  {
    method: 'GET',
    path: '/books',
    schema: { querystring: { type: 'object', properties: { title: { type: 'string' } } } },
    handler: (ctx) => {
      expectTypeOf(ctx.query).toEqualTypeOf<{ title?: string }>();
      const q = ctx.parsePagination();
      return newPage(books, books.length, q.page, q.limit);
    },
  },
  Book,
);
expectTypeOf(listBooks.handler).returns.toEqualTypeOf<HandlerResult<Page<ReplyType<typeof Book>>>>();
expectTypeOf<ReplyType<typeof Book>>().toEqualTypeOf<{ id: number; title: string; shelf?: string }>(); // a default may be left out
paginated(
  {
    method: 'GET',
    path: '/books',
    // @ts-expect-error the items are not Books
    handler: () => newPage([{ id: 'one' }], 1, 1, 20),
  },
  Book,
);
paginated(
  {
    method: 'GET',
    path: '/books',
    // @ts-expect-error a list is not a page
    handler: async () => books,
  },
  Book,
);
// an item schema without `as const` is untyped: the page is not checked
paginated({ method: 'GET', path: '/books', handler: (ctx) => ctx.parsePagination() }, { type: 'object' });

// typed routes are routes: a class controller lists them
class BooksController implements Controller {
  routes(): Route[] {
    return [fromThePath, getBook, addBook, noContent, me, listBooks];
  }
}

// a route object inline in `routes()` keeps the untyped ctx (TypeScript infers no element of a returned array)
const inline: Controller = {
  routes: () => [
    {
      method: 'GET',
      path: '/inline/:id',
      schema: { params: ID_PARAMS },
      handler: (ctx) => {
        expectTypeOf(ctx.params).toEqualTypeOf<Record<string, unknown>>();
        return ctx.params['id'];
      },
    },
    defineRoute({ method: 'GET', path: '/wrapped/:id', schema: { params: ID_PARAMS }, handler: (ctx) => ctx.params.id + 1 }),
  ],
};

// app.settings, typed from the settings schema
export const service = defineService({
  settings: { type: 'object', properties: { pool: { type: 'integer', default: 10 } }, required: ['pool'] } as const,
  setup(app) {
    expectTypeOf(app.settings.pool).toEqualTypeOf<number>();
  },
});

test('typed routes: the values at run time are what the types say', async (t: TestContext) => {
  const { app } = testApp();
  app.group('/api', timing).registerController(new BooksController());
  app.registerController(inline);
  app.registerController(controller(plainRoute));
  const seen: unknown[] = [];
  app.registerController(
    controller(
      defineRoute({
        method: 'GET',
        path: '/typed/:id',
        schema: { params: ID_PARAMS, querystring: { type: 'object', properties: { depth: { type: 'integer', default: 1 } } } },
        handler: (ctx) => {
          seen.push(ctx.params.id, ctx.query.depth);
          return { id: ctx.params.id };
        },
      }),
    ),
  );
  t.after(() => app.close());

  t.assert.deepStrictEqual((await app.inject('/typed/7')).json(), { id: 7 });
  t.assert.deepStrictEqual(seen, [7, 1], 'an integer id and the default depth, as typed');
  t.assert.deepStrictEqual((await app.inject('/api/shelves/sf/books/9')).json(), { shelf: 'sf', id: '9' });
  t.assert.deepStrictEqual((await app.inject('/api/me')).json(), { name: 'ursula', tenant: 'acme' });
  t.assert.deepStrictEqual((await app.inject('/api/books?page=1&limit=5')).json(), newPage(books, 1, 1, 5));
  t.assert.strictEqual((await app.inject('/wrapped/41')).json(), 42);
  const added = await app.inject({ method: 'POST', url: '/api/books', payload: { title: 'Kindred' } });
  t.assert.strictEqual(added.statusCode, 201);
  t.assert.strictEqual(added.headers['location'], '/books/3');
  const missing = await app.inject({ url: '/api/books/101', headers: { 'x-api-version': '2' } });
  t.assert.strictEqual(missing.statusCode, 404);
  t.assert.strictEqual(defineRoute(plainRoute), plainRoute, 'defineRoute returns its argument');
});
