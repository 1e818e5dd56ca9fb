import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { type } from 'arktype';
import Type from 'typebox';
import * as v from 'valibot';
import { z } from 'zod';
import type { Route } from '../../../src/app/core/route.ts';
import { newPage } from '../../../src/app/pagination/page.ts';
import { controller, testApp } from '../../helpers/app.ts';

/**
 * Standard Schema values (Zod 4, Valibot 1, ArkType 2) in every schema slot, beside JSON Schema
 * (TypeBox 1 builds JSON Schema): the library validates, its output reaches the handler and the
 * client, its issues are the same 400 problem as ajv's, and the document shows its JSON Schema.
 */

function appWith(...routes: Route[]) {
  const { app, logs } = testApp();
  app.registerController(controller(...routes));
  return { app, logs };
}

const post = (url: string, payload: unknown) => ({
  method: 'POST' as const,
  url,
  payload: payload as object,
  headers: { 'content-type': 'application/json' },
});

type Problem = { code: string; details: { errors: { in: string; path: string; message: string; keyword: string }[] } };

const LIBRARIES = {
  zod: z.object({ title: z.string().min(1), year: z.number().int(), tags: z.array(z.string()).optional() }),
  valibot: v.object({
    title: v.pipe(v.string(), v.minLength(1)),
    year: v.pipe(v.number(), v.integer()),
    tags: v.optional(v.array(v.string())),
  }),
  arktype: type({ title: 'string > 0', year: 'number.integer', 'tags?': 'string[]' }),
  typebox: Type.Object({ title: Type.String({ minLength: 1 }), year: Type.Integer(), tags: Type.Optional(Type.Array(Type.String())) }),
};

describe('a body schema from each library', () => {
  for (const [name, schema] of Object.entries(LIBRARIES)) {
    test(`${name}: valid bodies reach the handler, invalid ones are a 400 with a pointer per issue`, async () => {
      const { app } = appWith({ method: 'POST', path: '/books', schema: { body: schema }, handler: (ctx) => ctx.body });
      const ok = await app.inject(post('/books', { title: 'Dune', year: 1965 }));
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json(), { title: 'Dune', year: 1965 });
      const bad = await app.inject(post('/books', { title: '', year: 1.5, tags: ['a', 7] }));
      assert.equal(bad.statusCode, 400, bad.body);
      const problem = bad.json() as Problem;
      assert.equal(problem.code, 'VALIDATION_FAILED');
      const paths = problem.details.errors.map((e) => e.path).sort();
      assert.deepEqual(paths, ['/tags/1', '/title', '/year']);
      for (const e of problem.details.errors) {
        assert.equal(e.in, 'body');
        assert.ok(e.message.length > 0);
      }
    });
  }

  test('a Valibot schema validates: the body that passed silently before is refused', async () => {
    const { app } = appWith({ method: 'POST', path: '/a', schema: { body: LIBRARIES.valibot }, handler: () => 'reached' });
    assert.equal((await app.inject(post('/a', { title: '', year: 1.5 }))).statusCode, 400);
  });
});

describe('transforms and coercions: the handler gets the library’s output', () => {
  test('Zod params, query and body', async () => {
    const { app } = appWith({
      method: 'POST',
      path: '/items/:id',
      schema: {
        params: z.object({ id: z.coerce.number().int().positive() }),
        querystring: z.object({ verbose: z.enum(['yes', 'no']).transform((s) => s === 'yes') }),
        body: z.object({ name: z.string().transform((s) => s.trim().toUpperCase()) }),
      },
      handler: (ctx) => ({ params: ctx.params, query: ctx.query, body: ctx.body }),
    });
    const res = await app.inject(post('/items/42?verbose=yes', { name: '  ann ' }));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { params: { id: 42 }, query: { verbose: true }, body: { name: 'ANN' } });
    const bad = await app.inject(post('/items/x?verbose=maybe', { name: 'a' }));
    assert.equal(bad.statusCode, 400);
    assert.deepEqual((bad.json() as Problem).details.errors.map((e) => `${e.in} ${e.path}`).sort(), ['params /id', 'querystring /verbose']);
  });

  test('Valibot and ArkType transforms', async () => {
    const { app } = appWith(
      {
        method: 'POST',
        path: '/v',
        schema: {
          body: v.object({
            n: v.pipe(
              v.string(),
              v.transform((s) => s.length),
            ),
          }),
        },
        handler: (ctx) => ctx.body,
      },
      { method: 'POST', path: '/a', schema: { body: type({ n: type('string').pipe((s) => s.length) }) }, handler: (ctx) => ctx.body },
    );
    assert.deepEqual((await app.inject(post('/v', { n: 'abcd' }))).json(), { n: 4 });
    assert.deepEqual((await app.inject(post('/a', { n: 'abc' }))).json(), { n: 3 });
  });

  test('headers: a library’s coercion replaces the header value, as ajv’s does', async () => {
    const { app } = appWith({
      method: 'GET',
      path: '/h',
      schema: { headers: z.object({ 'x-count': z.coerce.number() }) },
      handler: (ctx) => ({ count: ctx.headers['x-count'] }),
    });
    assert.deepEqual((await app.inject({ url: '/h', headers: { 'x-count': '7' } })).json(), { count: 7 });
    assert.equal((await app.inject({ url: '/h', headers: { 'x-count': 'seven' } })).statusCode, 400);
  });

  test('an asynchronous refinement is awaited, in the head and in the body', async () => {
    const taken = z.string().refine(async (name) => name !== 'taken', 'is taken');
    const { app } = appWith({
      method: 'POST',
      path: '/users/:name',
      schema: { params: z.object({ name: taken }), body: z.object({ email: taken }) },
      handler: () => ({ ok: true }),
    });
    assert.equal((await app.inject(post('/users/ann', { email: 'a@x' }))).statusCode, 200);
    const head = await app.inject(post('/users/taken', { email: 'a@x' }));
    assert.equal(head.statusCode, 400);
    assert.deepEqual((head.json() as Problem).details.errors, [
      { in: 'params', path: '/name', message: 'is taken', keyword: 'schema', params: {} },
    ]);
    const body = await app.inject(post('/users/ann', { email: 'taken' }));
    assert.equal(body.statusCode, 400);
    assert.equal((body.json() as Problem).details.errors[0]?.path, '/email');
  });

  test('JSON Schema and a library in one route', async () => {
    const { app } = appWith({
      method: 'POST',
      path: '/mix/:id',
      schema: { params: { type: 'object', properties: { id: { type: 'integer' } } }, body: z.object({ n: z.number() }) },
      handler: (ctx) => ({ id: ctx.params['id'], n: (ctx.body as { n: number }).n }),
    });
    assert.deepEqual((await app.inject(post('/mix/3', { n: 1 }))).json(), { id: 3, n: 1 });
    assert.equal((await app.inject(post('/mix/3', { n: 'x' }))).statusCode, 400);
  });
});

describe('response schemas from a library shape the reply', () => {
  const ROW = { id: 7, name: 'Ann', password: 'leaked' };
  const cases = {
    zod: z.object({ id: z.number(), name: z.string() }),
    valibot: v.object({ id: v.number(), name: v.string() }),
    arktype: type({ id: 'number', name: 'string' }),
  };
  for (const [name, schema] of Object.entries(cases)) {
    test(`${name}: keys the schema does not name are dropped`, async () => {
      const { app } = appWith({ method: 'GET', path: '/u', schema: { response: { 200: schema } }, handler: () => ROW });
      const res = await app.inject('/u');
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{"id":7,"name":"Ann"}');
    });
  }

  test('a reply that does not fit is a 500 logged with the route, nothing of it sent', async () => {
    const { app, logs } = appWith({
      method: 'GET',
      path: '/u',
      schema: { response: { 200: cases.zod } },
      handler: () => ({ id: 'seven' }),
    });
    const res = await app.inject('/u');
    assert.equal(res.statusCode, 500);
    assert.doesNotMatch(res.body, /seven/);
    assert.ok(logs.lines.some((line) => /GET \/u: the 200 response does not fit its schema: \/id/.test(JSON.stringify(line))));
  });

  test('the output is sent: a transform in a response schema applies', async () => {
    const schema = z.object({ at: z.date().transform((d) => d.toISOString().slice(0, 10)) });
    const { app } = appWith({
      method: 'GET',
      path: '/d',
      schema: { response: { 200: schema } },
      handler: () => ({ at: new Date('2026-01-02T03:04:05Z'), x: 1 }),
    });
    assert.equal((await app.inject('/d')).body, '{"at":"2026-01-02"}');
  });

  test('a paginated route with a library query schema: page and limit still reach parsePagination', async () => {
    for (const querystring of [z.object({ q: z.string().optional() }), z.strictObject({ q: z.string().optional() })]) {
      const { app } = appWith({
        method: 'GET',
        path: '/books',
        paginated: { item: z.object({ id: z.number() }) },
        schema: { querystring },
        handler: (ctx) => {
          const { page, limit } = ctx.parsePagination();
          return newPage([{ id: page * 100 + limit }], 1, page, limit);
        },
      });
      const res = await app.inject('/books?page=3&limit=7&q=x');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual((res.json() as { data: unknown[] }).data, [{ id: 307 }]);
    }
  });

  test('a paginated route with a Zod item schema: items checked and shaped by the library', async () => {
    const { app } = appWith({
      method: 'GET',
      path: '/books',
      paginated: { item: z.object({ id: z.number() }) },
      handler: () => newPage([{ id: 1, secret: 'x' }], 1, 1, 20),
    });
    const res = await app.inject('/books');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: [{ id: 1 }], total: 1, page: 1, limit: 20, total_pages: 1 });
  });
});

describe('registration refuses what is neither JSON Schema nor Standard Schema', () => {
  for (const [what, value] of [
    ['a function', () => true],
    ['a class instance', new (class Schema {})()],
    ['a string', 'string'],
    ['an array', [{ type: 'string' }]],
  ] as const) {
    test(what, () => {
      const { app } = testApp();
      assert.throws(
        () => app.registerController(controller({ method: 'POST', path: '/x', schema: { body: value as never }, handler: () => null })),
        /route POST \/x: the body schema is invalid: expected a JSON Schema \(a plain object\) or a Standard Schema/,
      );
    });
  }

  test('a response slot is named too', () => {
    const { app } = testApp();
    assert.throws(
      () =>
        app.registerController(controller({ method: 'GET', path: '/x', schema: { response: { 201: 42 as never } }, handler: () => null })),
      /route GET \/x: the response 201 schema is invalid/,
    );
  });
});

describe('JSON Schema draft 2020-12, enforced', () => {
  const cases: [string, Record<string, unknown>, unknown[], unknown[]][] = [
    ['dependentRequired', { type: 'object', dependentRequired: { a: ['b'] } }, [{ a: 1, b: 2 }, { b: 2 }], [{ a: 'x' }]],
    [
      'unevaluatedProperties: false',
      {
        type: 'object',
        properties: { a: { type: 'string' } },
        allOf: [{ properties: { b: { type: 'string' } } }],
        unevaluatedProperties: false,
      },
      [{ a: 'x', b: 'y' }],
      [{ a: 'x', b: 'y', c: 1 }],
    ],
    [
      'prefixItems with items: false',
      { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
      [['a', 1], ['a']],
      [['a', 1, 2], [1]],
    ],
    [
      '$defs',
      { $defs: { id: { type: 'integer' } }, type: 'object', properties: { id: { $ref: '#/$defs/id' } } },
      [{ id: 1 }],
      [{ id: 'x' }],
    ],
  ];
  for (const [name, schema, valid, invalid] of cases) {
    test(name, async () => {
      const { app } = appWith({ method: 'POST', path: '/s', schema: { body: schema }, handler: () => ({ ok: true }) });
      for (const body of valid) assert.equal((await app.inject(post('/s', body))).statusCode, 200, JSON.stringify(body));
      for (const body of invalid) assert.equal((await app.inject(post('/s', body))).statusCode, 400, JSON.stringify(body));
    });
  }

  test('a schema declaring draft-07 is read as draft-07 (items as a tuple)', async () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'string' }],
      additionalItems: false,
    };
    const { app } = appWith({ method: 'POST', path: '/s', schema: { body: schema }, handler: () => ({ ok: true }) });
    assert.equal((await app.inject(post('/s', ['a']))).statusCode, 200);
    assert.equal((await app.inject(post('/s', ['a', 'b']))).statusCode, 400);
  });

  test('z.toJSONSchema() output, $schema included, is accepted and enforced (Zod marks it with a hidden ~standard: Zod checks it)', async () => {
    const Book = z.object({ title: z.string().min(1), year: z.number().int() });
    const { app } = appWith({ method: 'POST', path: '/b', schema: { body: z.toJSONSchema(Book) }, handler: (ctx) => ctx.body });
    assert.equal((await app.inject(post('/b', { title: 'Dune', year: 1965 }))).statusCode, 200);
    assert.equal((await app.inject(post('/b', { title: '', year: 1965 }))).statusCode, 400);
  });

  test('a plain copy of z.toJSONSchema() (no hidden ~standard) is validated by ajv as 2020-12', async () => {
    const Book = { ...z.toJSONSchema(z.object({ title: z.string().min(1), tags: z.array(z.string()) })) };
    assert.equal(Object.getOwnPropertyDescriptor(Book, '~standard'), undefined);
    const { app } = appWith({ method: 'POST', path: '/b', schema: { body: Book }, handler: () => ({ ok: true }) });
    assert.equal((await app.inject(post('/b', { title: 'Dune', tags: [] }))).statusCode, 200);
    const bad = await app.inject(post('/b', { title: '', tags: [1] }));
    assert.equal(bad.statusCode, 400);
    assert.deepEqual((bad.json() as Problem).details.errors.map((e) => `${e.keyword} ${e.path}`).sort(), [
      'minLength /title',
      'type /tags/0',
    ]);
  });

  test('$async: true is awaited: its errors are a 400, not a pass', async () => {
    const schema = { $async: true, type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const { app } = appWith({ method: 'POST', path: '/s', schema: { body: schema }, handler: () => ({ ok: true }) });
    assert.equal((await app.inject(post('/s', { n: 1 }))).statusCode, 200);
    const bad = await app.inject(post('/s', { n: 'x' }));
    assert.equal(bad.statusCode, 400);
    assert.equal((bad.json() as Problem).details.errors[0]?.path, '/n');
  });

  test('query coercion works as before under 2020-12', async () => {
    const { app } = appWith({
      method: 'GET',
      path: '/q',
      schema: {
        querystring: { type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } },
      },
      handler: (ctx) => ctx.query,
    });
    assert.deepEqual((await app.inject('/q?n=3&tags=a')).json(), { n: 3, tags: ['a'] });
  });
});

describe('the OpenAPI document shows a library’s schemas', () => {
  test('request body, params and response from Zod, $schema left out', async () => {
    const { app } = appWith({
      method: 'POST',
      path: '/books/:id',
      schema: {
        params: z.object({ id: z.coerce.number().int() }),
        body: z.object({ title: z.string().min(1) }),
        response: { 201: z.object({ id: z.number(), title: z.string() }) },
      },
      handler: (ctx) => ({ id: 1, title: (ctx.body as { title: string }).title }),
    });
    const doc = (await app.inject('/docs/openapi.json')).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody: { content: Record<string, { schema: unknown }> };
            responses: Record<string, { content: Record<string, { schema: unknown }> }>;
            parameters: { name: string; schema: unknown }[];
          }
        >
      >;
    };
    const op = doc.paths['/books/{id}']?.['post'];
    assert.ok(op);
    assert.deepEqual(op.requestBody.content['application/json']?.schema, {
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 } },
      required: ['title'],
    });
    assert.deepEqual(op.responses['201']?.content['application/json']?.schema, {
      type: 'object',
      properties: { id: { type: 'number' }, title: { type: 'string' } },
      required: ['id', 'title'],
      additionalProperties: false,
    });
    assert.equal(op.parameters.find((p) => p.name === 'id')?.schema !== undefined, true);
  });

  test('a part JSON Schema cannot say (z.date()) is left open; the rest of the slot is documented', async () => {
    const { app } = appWith({
      method: 'POST',
      path: '/events',
      summary: 'An event',
      schema: { body: z.object({ at: z.date(), name: z.string() }) },
      handler: () => ({ ok: true }),
    });
    const doc = (await app.inject('/docs/openapi.json')).json() as {
      paths: Record<
        string,
        Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>
      >;
    };
    const body = doc.paths['/events']?.['post']?.requestBody.content['application/json']?.schema;
    assert.deepEqual(body?.properties, { at: {}, name: { type: 'string' } });
  });

  test('a recursive Zod schema: its $defs become components, and the document is valid OpenAPI 3.1', async () => {
    interface Category {
      name: string;
      children: Category[];
    }
    const Category: z.ZodType<Category> = z.object({
      name: z.string(),
      get children() {
        return z.array(Category);
      },
    });
    const Tree = z.object({ root: Category });
    const { app } = appWith(
      {
        method: 'PUT',
        path: '/tree',
        summary: 'Replace the tree',
        schema: { body: Tree, response: { 200: Tree } },
        handler: (ctx) => ctx.body,
      },
      {
        method: 'GET',
        path: '/tree',
        summary: 'The tree',
        schema: { response: { 200: Tree } },
        handler: () => ({ root: { name: 'a', children: [] } }),
      },
    );
    const doc = (await app.inject('/docs/openapi.json')).json() as { components: { schemas: Record<string, unknown> } };
    const text = JSON.stringify(doc);
    assert.doesNotMatch(text, /#\/\$defs\//, 'no reference left to a $defs the document does not have');
    assert.ok(Object.keys(doc.components.schemas).length >= 3, Object.keys(doc.components.schemas).join());
    await SwaggerParser.validate(structuredClone(doc) as never);
    const put = await app.inject({
      ...post('/tree', { root: { name: 'a', children: [{ name: 'b', children: [{ name: 7 }] }] } }),
      method: 'PUT',
    });
    assert.equal(put.statusCode, 400);
    assert.equal((put.json() as Problem).details.errors[0]?.path, '/root/children/0/children/0/name');
  });
});
