import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { JsonSchema, Route } from '../../../src/app/core/route.ts';
import { buildOpenApi } from '../../../src/app/openapi/openapi.ts';
import { newPage } from '../../../src/app/pagination/page.ts';
import { paginated } from '../../../src/app/typed/paginated.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

/**
 * Response schemas through the whole pipeline: what a route declares is what
 * the client gets, a value that does not fit is a 500 problem (nothing of the
 * value is sent), and everything else (routes without schemas, raw replies,
 * problems, the OpenAPI document) is as it was.
 */

const USER: JsonSchema = {
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
};
const ROW = { id: 7, name: 'Ann', password: 'leaked', session: { token: 'leaked' } };

function appWith(routes: Route[], config: Parameters<typeof testApp>[0] = {}) {
  const { app, logs } = testApp(config);
  app.registerController(controller(...routes));
  return { app, logs };
}

describe('undeclared properties are never sent', () => {
  test('a JSON route with a 200 schema (additionalProperties: false) used to send the password', async () => {
    const { app } = appWith([{ method: 'GET', path: '/users/:id', schema: { response: { 200: USER } }, handler: () => ROW }]);
    const res = await app.inject('/users/7');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.body, '{"id":7,"name":"Ann"}');
    assert.equal(res.headers['content-length'], String(res.body.length));
  });

  test('the same without additionalProperties, from ctx.ok, ctx.created (a 2xx schema) and an async handler', async () => {
    const open = { ...USER, additionalProperties: undefined };
    const { app } = appWith([
      { method: 'GET', path: '/ok', schema: { response: { 200: open } }, handler: (ctx) => ctx.ok(ROW) },
      { method: 'POST', path: '/users', schema: { response: { '2xx': USER } }, handler: (ctx) => ctx.created(ROW) },
      { method: 'GET', path: '/async', schema: { response: { 200: USER } }, handler: async () => ROW },
    ]);
    for (const [method, url, status] of [
      ['GET', '/ok', 200],
      ['POST', '/users', 201],
      ['GET', '/async', 200],
    ] as const) {
      const res = await app.inject({ method, url });
      assert.equal(res.statusCode, status, url);
      assert.equal(res.body, '{"id":7,"name":"Ann"}', url);
    }
  });

  test('a paginated route sends the Page<T> envelope with only the declared item properties', async () => {
    const { app } = appWith([
      paginated(
        {
          method: 'GET',
          path: '/users',
          handler: (ctx) => {
            const q = ctx.parsePagination();
            return { ...newPage([ROW, { ...ROW, id: 8 }], 2, q.page, q.limit), cursor: 'leaked' };
          },
        },
        USER,
      ),
    ]);
    const res = await app.inject('/users?page=1&limit=10');
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"data":[{"id":7,"name":"Ann"},{"id":8,"name":"Ann"}],"total":2,"page":1,"limit":10,"total_pages":1}');
  });

  test('an onRequest hook answering a route with a schema is shaped too', async () => {
    const { app } = appWith([
      { method: 'GET', path: '/me', schema: { response: { 200: USER } }, onRequest: [(ctx) => ctx.ok(ROW)], handler: () => undefined },
    ]);
    assert.equal((await app.inject('/me')).body, '{"id":7,"name":"Ann"}');
  });

  test('HEAD of a GET route with a schema: the Content-Length of the shaped body, no body', async () => {
    const { app } = appWith([{ method: 'GET', path: '/users/:id', schema: { response: { 200: USER } }, handler: () => ROW }]);
    const res = await app.inject({ method: 'HEAD', url: '/users/7' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], String('{"id":7,"name":"Ann"}'.length));
    assert.equal(res.body, '');
  });
});

describe('what keeps JSON.stringify', () => {
  test('a route without a response schema sends the value as it is', async () => {
    const { app } = appWith([{ method: 'GET', path: '/raw-row', handler: () => ROW }]);
    assert.deepEqual((await app.inject('/raw-row')).json(), ROW);
  });

  test('a status the route declares no schema for', async () => {
    const { app } = appWith([
      { method: 'GET', path: '/accepted', schema: { response: { 200: USER } }, handler: (ctx) => ctx.status(202) && ROW },
    ]);
    const res = await app.inject('/accepted');
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), ROW);
  });

  test('a raw ctx.send() reply is not serialized, and 204 stays empty', async () => {
    const { app } = appWith([
      {
        method: 'GET',
        path: '/text',
        schema: { response: { 200: USER } },
        handler: (ctx) => ctx.send('{"password":"kept"}', 'application/json'),
      },
      { method: 'DELETE', path: '/users/:id', schema: { response: { 204: {}, default: USER } }, handler: (ctx) => ctx.noContent() },
    ]);
    const text = await app.inject('/text');
    assert.equal(text.body, '{"password":"kept"}');
    const deleted = await app.inject({ method: 'DELETE', url: '/users/7' });
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
  });

  test('problems are not shaped by the route schemas, even a default one', async () => {
    const { app } = appWith([
      {
        method: 'GET',
        path: '/users/:id',
        schema: { response: { 200: USER, default: { type: 'object', properties: { error: { type: 'string' } } } } },
        handler: () => {
          throw KError.notFound('no user 7');
        },
      },
    ]);
    const res = await app.inject('/users/7');
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.json().detail, 'no user 7');
    assert.equal(res.json().code, 'NOT_FOUND');
  });

  test("what the error handler answers is an error response: the route's schemas do not apply", async () => {
    const { app } = appWith([
      {
        method: 'GET',
        path: '/users/:id',
        schema: { response: { 200: USER } },
        handler: () => {
          throw new Error('boom');
        },
      },
    ]);
    app.setErrorHandler((_error, ctx) => ctx.ok({ error: 'mapped', extra: true }));
    assert.deepEqual((await app.inject('/users/7')).json(), { error: 'mapped', extra: true });
  });
});

describe('a value that does not fit is a 500 problem', () => {
  const routes: Route[] = [
    { method: 'GET', path: '/string-id', schema: { response: { 200: USER } }, handler: () => ({ ...ROW, id: '7' }) },
    { method: 'GET', path: '/missing', schema: { response: { 200: USER } }, handler: () => ({ id: 7, password: 'leaked' }) },
    { method: 'GET', path: '/async-null', schema: { response: { 200: USER } }, handler: async () => null },
    paginated({ method: 'GET', path: '/page', handler: () => newPage([{ id: 'x', name: 'leaked' }], 1, 1, 20) }, USER),
  ];

  test('outside production: the problem says what did not fit, the error is logged with the route', async () => {
    const { app, logs } = appWith(routes);
    for (const [url, route, issue] of [
      ['/string-id', '/string-id', '/id must be integer'],
      ['/missing', '/missing', '/name is missing'],
      ['/async-null', '/async-null', '/ must be object'],
      ['/page', '/page', '/data/0/id must be integer'],
    ] as const) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 500, url);
      assert.equal(res.headers['content-type'], 'application/problem+json', url);
      const problem = res.json();
      assert.equal(problem.code, 'INTERNAL');
      assert.equal(problem.detail, `GET ${route}: the 200 response does not fit its schema: ${issue}`);
      assert.doesNotMatch(res.body, /leaked/);
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
      const line = logs.lines.find((l) => l['requestId'] === problem.requestId && l['msg'] === 'request failed');
      assert.equal(line?.['level'], 'error', `${url}: logged as an error`);
      assert.equal(line?.['route'], route);
      assert.equal((line?.['err'] as { type?: string } | undefined)?.type, 'ResponseSchemaError');
    }
  });

  test('in production the detail is hidden, and still logged', async () => {
    const { app, logs } = appWith(routes, { env: 'production' });
    const res = await app.inject('/string-id');
    assert.equal(res.statusCode, 500);
    const problem = res.json();
    assert.equal(problem.detail, 'An internal error occurred.');
    assert.doesNotMatch(res.body, /integer|leaked/);
    const line = logs.lines.find((l) => l['requestId'] === problem.requestId && l['msg'] === 'request failed');
    assert.match(String((line?.['err'] as { message?: string } | undefined)?.message), /\/id must be integer/);
    assert.equal(line?.['route'], '/string-id');
  });

  test('the error handler sees the ResponseSchemaError once and may answer instead', async () => {
    const { app } = appWith(routes);
    const seen: string[] = [];
    app.setErrorHandler((error, ctx) => {
      seen.push((error as Error).name);
      ctx.ok({ retry: true, ...ROW });
      ctx.status(502);
    });
    const res = await app.inject('/string-id');
    assert.equal(res.statusCode, 502);
    assert.deepEqual(res.json(), { retry: true, ...ROW });
    assert.deepEqual(seen, ['ResponseSchemaError']);
  });

  test('a response schema that cannot be compiled is a 500 logged as FLO_ERR_BAD_SCHEMA, the registration still works', async () => {
    const { app, logs } = appWith([
      {
        method: 'GET',
        path: '/broken',
        schema: { response: { 200: { type: 'object', properties: { a: { $ref: '#/nowhere' } } } } },
        handler: () => ({ a: 1 }),
      },
    ]);
    const res = await app.inject('/broken');
    assert.equal(res.statusCode, 500);
    const line = logs.lines.find((l) => l['requestId'] === res.json().requestId && l['msg'] === 'request failed');
    assert.equal((line?.['err'] as { code?: string } | undefined)?.code, 'FLO_ERR_BAD_SCHEMA');
  });
});

test('the OpenAPI document is the same before and after the serializers are compiled, and still validates', async () => {
  const item = { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, at: { type: 'string', format: 'date-time' } } };
  const { app } = appWith([
    paginated({ method: 'GET', path: '/items', handler: () => newPage([{ id: 1, at: new Date(0), x: 1 }], 1, 1, 20) }, item),
    { method: 'GET', path: '/items/:id', schema: { response: { 200: item, '4xx': { type: 'object' } } }, handler: () => ({ id: 1, y: 2 }) },
    {
      method: 'GET',
      path: '/health-like',
      schema: { response: { 200: { description: 'OK', content: { 'application/json': { schema: item } } } } },
      handler: () => ({ id: 2 }),
    },
  ]);
  const before = buildOpenApi(app.config, app.routes);
  for (const url of ['/items', '/items/1', '/health-like']) assert.equal((await app.inject(url)).statusCode, 200, url);
  assert.deepEqual(buildOpenApi(app.config, app.routes), before);
  assert.deepEqual(app.openapi(), before);
  await SwaggerParser.validate(structuredClone(before) as never);
});

test('declared properties without a type mean an object: an array of rows is refused, never sent whole', async () => {
  const { app } = testApp();
  app.registerController(
    controller({
      method: 'GET',
      path: '/rows',
      schema: { response: { 200: { properties: { id: { type: 'number' } } } } },
      handler: () => [{ id: 1, password: 'leaked' }],
    }),
  );
  const res = await app.inject('/rows');
  assert.equal(res.statusCode, 500);
  assert.doesNotMatch(res.body, /leaked/);
  await app.close();
});
