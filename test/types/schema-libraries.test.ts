import { type TestContext, test } from 'node:test';
import { type } from 'arktype';
import { expectTypeOf } from 'expect-type';
import { type Static, Type } from 'typebox';
import * as v from 'valibot';
import { z } from 'zod';
import {
  defineRoute,
  newPage,
  type Page,
  type PageOf,
  paginated,
  type ReplyType,
  type SchemaType,
  type TypeBoxProvider,
  withTypeProvider,
} from '../../src/index.ts';
import { controller, testApp } from '../helpers/app.ts';

/*
 * The default type provider types each schema library's schemas with no provider to write: a
 * Standard Schema (Zod 4, Valibot 1, ArkType 2) by its library's types, the handler reading the
 * OUTPUT (after transforms and coercions) and returning the INPUT of a response schema; a TypeBox
 * 1 schema as TypeBox's `Static` types it. The typecheck is the test; the node:test part runs
 * one route of each library.
 */

const post = (url: string, payload: object) => ({
  method: 'POST' as const,
  url,
  payload,
  headers: { 'content-type': 'application/json' },
});

// ---------------------------------------------------------------------------------------------
// Zod 4

const ZodBook = z.object({ id: z.number().int(), title: z.string(), tags: z.array(z.string()).optional() });
expectTypeOf<SchemaType<typeof ZodBook>>().toEqualTypeOf<{ id: number; title: string; tags?: string[] | undefined }>();

// a transform: the output is what validation gives the handler, the input what a reply must be
const Stamp = z.object({ at: z.date().transform((d) => d.toISOString().slice(0, 10)) });
expectTypeOf<SchemaType<typeof Stamp>>().toEqualTypeOf<{ at: string }>();
expectTypeOf<ReplyType<typeof Stamp>>().toEqualTypeOf<{ at: Date }>();

const zodRoute = defineRoute({
  method: 'POST',
  path: '/zod/:id',
  schema: {
    params: z.object({ id: z.coerce.number().int().positive() }),
    querystring: z.object({ verbose: z.enum(['yes', 'no']).transform((s) => s === 'yes'), page: z.string().optional() }),
    headers: z.object({ 'x-count': z.coerce.number().optional() }),
    body: z.object({ title: z.string().transform((s) => s.trim()), pages: z.string().transform((s) => s.length) }),
    response: { 201: ZodBook },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ verbose: boolean; page?: string | undefined }>();
    expectTypeOf(ctx.headers['x-count']).toEqualTypeOf<number | undefined>();
    expectTypeOf(ctx.body).toEqualTypeOf<{ title: string; pages: number }>();
    // @ts-expect-error `z.coerce.number()`: the handler gets a number
    const id: string = ctx.params.id;
    // @ts-expect-error an undeclared query parameter
    void ctx.query.sort;
    void id;
    ctx.status(201);
    return { id: ctx.params.id + ctx.body.pages, title: ctx.body.title, tags: ctx.query.verbose ? ['verbose'] : [] };
  },
});

defineRoute({
  method: 'POST',
  path: '/zod',
  schema: { body: z.object({ title: z.string() }), response: { 201: ZodBook } },
  // @ts-expect-error `id` is required by the 201 schema
  handler: (ctx) => ({ title: ctx.body.title }),
});

defineRoute({
  method: 'GET',
  path: '/zod/stamp',
  schema: { response: { 200: Stamp } },
  handler: () => ({ at: new Date() }), // the input: a Date, sent as the output's string
});

defineRoute({
  method: 'GET',
  path: '/zod/stamp',
  schema: { response: { 200: Stamp } },
  // @ts-expect-error the reply is the schema's input (a Date), not its output
  handler: () => ({ at: '2026-01-02' }),
});

const zodPage = paginated({ method: 'GET', path: '/zod', handler: () => newPage([{ id: 1, title: 'Dune' }], 1, 1, 20) }, ZodBook);
expectTypeOf<PageOf<typeof ZodBook>>().toEqualTypeOf<Page<{ id: number; title: string; tags?: string[] | undefined }>>();

paginated(
  {
    method: 'GET',
    path: '/zod',
    // @ts-expect-error the items are not books: `title` is missing
    handler: () => newPage([{ id: 1 }], 1, 1, 20),
  },
  ZodBook,
);

// ---------------------------------------------------------------------------------------------
// Valibot 1

const ValibotBook = v.object({ id: v.number(), title: v.string() });

const valibotRoute = defineRoute({
  method: 'POST',
  path: '/valibot/:id',
  schema: {
    params: v.object({ id: v.pipe(v.string(), v.transform(Number), v.integer()) }),
    querystring: v.object({ sort: v.optional(v.picklist(['asc', 'desc'])) }),
    body: v.object({
      title: v.string(),
      pages: v.pipe(
        v.string(),
        v.transform((s) => s.length),
      ),
    }),
    response: { 201: ValibotBook },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ sort?: 'asc' | 'desc' | undefined }>();
    expectTypeOf(ctx.body).toEqualTypeOf<{ title: string; pages: number }>();
    ctx.status(201);
    return { id: ctx.params.id + ctx.body.pages, title: ctx.body.title };
  },
});

defineRoute({
  method: 'POST',
  path: '/valibot',
  schema: { body: v.object({ title: v.string() }), response: { 201: ValibotBook } },
  // @ts-expect-error `id` is required by the 201 schema
  handler: (ctx) => ({ title: ctx.body.title }),
});

paginated(
  {
    method: 'GET',
    path: '/valibot',
    handler: () => {
      const page = newPage([{ id: 1, title: 'Dune' }], 1, 1, 20);
      expectTypeOf(page).toExtend<Page<{ id: number; title: string }>>();
      return page;
    },
  },
  ValibotBook,
);

// ---------------------------------------------------------------------------------------------
// ArkType 2

const ArkBook = type({ id: 'number', title: 'string', 'tags?': 'string[]' });

const arktypeRoute = defineRoute({
  method: 'POST',
  path: '/arktype/:id',
  schema: {
    params: type({ id: 'string.integer.parse' }),
    querystring: type({ 'limit?': 'string.integer.parse' }),
    body: type({ title: 'string', pages: type('string').pipe((s) => s.length) }),
    response: { 201: ArkBook },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ limit?: number }>();
    expectTypeOf(ctx.body).toEqualTypeOf<{ title: string; pages: number }>();
    ctx.status(201);
    return { id: ctx.params.id + ctx.body.pages, title: ctx.body.title };
  },
});

defineRoute({
  method: 'POST',
  path: '/arktype',
  schema: { body: type({ title: 'string' }), response: { 201: ArkBook } },
  // @ts-expect-error `id` is required by the 201 schema
  handler: (ctx) => ({ title: ctx.body.title }),
});

paginated(
  {
    method: 'GET',
    path: '/arktype',
    // @ts-expect-error the ids are numbers
    handler: () => newPage([{ id: 'one', title: 'Dune' }], 1, 1, 20),
  },
  ArkBook,
);

// ---------------------------------------------------------------------------------------------
// TypeBox 1: JSON Schema, validated by ajv; typed as TypeBox's `Static`, with no provider

const TypeBoxBook = Type.Object({ id: Type.Integer(), title: Type.String(), tags: Type.Optional(Type.Array(Type.String())) });
expectTypeOf<SchemaType<typeof TypeBoxBook>>().toEqualTypeOf<Static<typeof TypeBoxBook>>();

// the kinds a route's schema uses, each typed as TypeBox's own `Static` types it
const Everything = Type.Object({
  integer: Type.Integer(),
  number: Type.Number(),
  boolean: Type.Boolean(),
  nullable: Type.Union([Type.String(), Type.Null()]),
  literal: Type.Union([Type.Literal('a'), Type.Literal(2)]),
  enum: Type.Enum(['x', 'y']),
  array: Type.Array(Type.Object({ a: Type.String() })),
  immutable: Type.Immutable(Type.Array(Type.String())),
  tuple: Type.Tuple([Type.String(), Type.Number()]),
  record: Type.Record(Type.String(), Type.Number()),
  numericKeys: Type.Record(Type.Integer(), Type.Boolean()),
  intersect: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]),
  optional: Type.Optional(Type.String()),
  readonly: Type.Readonly(Type.String()),
  readonlyOptional: Type.Readonly(Type.Optional(Type.Boolean())),
  unsafe: Type.Unsafe<{ custom: true }>({ type: 'object' }),
  any: Type.Any(),
  unknown: Type.Unknown(),
  empty: Type.Object({}),
});
expectTypeOf<SchemaType<typeof Everything>>().toEqualTypeOf<Static<typeof Everything>>();

const typeboxRoute = defineRoute({
  method: 'POST',
  path: '/typebox/:id',
  schema: {
    params: Type.Object({ id: Type.Integer() }),
    querystring: Type.Object({ fields: Type.Optional(Type.String()) }),
    body: Type.Object({ title: Type.String(), pages: Type.Integer() }),
    response: { 201: TypeBoxBook },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ fields?: string }>();
    expectTypeOf(ctx.body).toEqualTypeOf<{ title: string; pages: number }>();
    // @ts-expect-error the id is an integer
    const id: string = ctx.params.id;
    void id;
    ctx.status(201);
    return { id: ctx.params.id + ctx.body.pages, title: ctx.body.title };
  },
});

defineRoute({
  method: 'POST',
  path: '/typebox',
  schema: { body: Type.Object({ title: Type.String() }), response: { 201: TypeBoxBook } },
  // @ts-expect-error `id` is required by the 201 schema
  handler: (ctx) => ({ title: ctx.body.title }),
});

const typeboxPage = paginated(
  { method: 'GET', path: '/typebox', handler: () => newPage([{ id: 1, title: 'Dune' }], 1, 1, 20) },
  TypeBoxBook,
);

paginated(
  {
    method: 'GET',
    path: '/typebox',
    // @ts-expect-error the items are not books: `title` is missing
    handler: () => newPage([{ id: 1 }], 1, 1, 20),
  },
  TypeBoxBook,
);

// ---------------------------------------------------------------------------------------------
// libraries and JSON Schema side by side; a JSON Schema literal is json-schema-to-ts's as before

defineRoute({
  method: 'POST',
  path: '/mixed/:id',
  schema: {
    params: { type: 'object', properties: { id: { type: 'integer' } } },
    querystring: Type.Object({ q: Type.String() }),
    body: z.object({ n: z.number() }),
    response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ q: string }>();
    expectTypeOf(ctx.body).toEqualTypeOf<{ n: number }>();
    return { ok: true };
  },
});

// the contract's name for TypeBox 1.x: `withTypeProvider<TypeBoxProvider>()` types as the default does
{
  const typed = withTypeProvider<TypeBoxProvider>();
  typed.defineRoute({
    method: 'POST',
    path: '/shelves/:id',
    schema: {
      params: Type.Object({ id: Type.Integer() }),
      body: Type.Object({ name: Type.String() }),
      response: { 201: Type.Object({ id: Type.Integer(), name: Type.String() }) },
    },
    handler: (ctx) => {
      expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
      expectTypeOf(ctx.body).toEqualTypeOf<{ name: string }>();
      return { id: ctx.params.id, name: ctx.body.name };
    },
  });
  typed.defineRoute({
    method: 'POST',
    path: '/shelves',
    schema: { body: Type.Object({ name: Type.String() }), response: { 201: Type.Object({ id: Type.Integer(), name: Type.String() }) } },
    // @ts-expect-error `id` is required by the 201 schema
    handler: (ctx) => ({ name: ctx.body.name }),
  });
}

test('each library’s route validates and answers with the types’ values', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(controller(zodRoute, valibotRoute, arktypeRoute, typeboxRoute, zodPage, typeboxPage));
  t.after(() => app.close());
  const request = post('/zod/3?verbose=yes', { title: ' Dune ', pages: 'abcd' });
  const zod = await app.inject({ ...request, headers: { ...request.headers, 'x-count': '2' } });
  t.assert.strictEqual(zod.statusCode, 201, zod.body);
  t.assert.deepStrictEqual(zod.json(), { id: 7, title: 'Dune', tags: ['verbose'] });
  for (const name of ['valibot', 'arktype', 'typebox']) {
    const res = await app.inject(post(`/${name}/3`, { title: 'Dune', pages: name === 'typebox' ? 4 : 'abcd' }));
    t.assert.strictEqual(res.statusCode, 201, `${name}: ${res.body}`);
    t.assert.deepStrictEqual(res.json(), { id: 7, title: 'Dune' }, name);
    t.assert.strictEqual((await app.inject(post(`/${name}/three`, { title: 'Dune', pages: 'x' }))).statusCode, 400, name);
  }
  for (const path of ['/zod', '/typebox']) {
    t.assert.deepStrictEqual((await app.inject(path)).json(), newPage([{ id: 1, title: 'Dune' }], 1, 1, 20), path);
  }
});
