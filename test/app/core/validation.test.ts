import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { App } from '../../../src/app/app.ts';
import type { Route } from '../../../src/app/core/route.ts';
import { controller, testApp } from '../../helpers/app.ts';

const book = {
  type: 'object',
  required: ['title', 'year'],
  additionalProperties: false,
  properties: { title: { type: 'string', minLength: 1 }, year: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
};

function appWith(...routes: Route[]): App {
  const { app } = testApp();
  app.registerController(controller(...routes));
  return app;
}

describe('route schema validation', () => {
  test('params and query are coerced to the declared types before the handler runs', async () => {
    const app = appWith({
      method: 'GET',
      path: '/books/:id',
      schema: {
        params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } } },
        querystring: {
          type: 'object',
          properties: {
            full: { type: 'boolean' },
            fields: { type: 'array', items: { type: 'string' } },
            lang: { type: 'string', default: 'en' },
          },
        },
      },
      handler: (ctx) => ({ params: ctx.params, query: ctx.query }),
    });
    const res = await app.inject('/books/42?full=true&fields=title');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { params: { id: 42 }, query: { full: true, fields: ['title'], lang: 'en' } });
  });

  test('invalid params or query are a 400 VALIDATION_FAILED problem listing every error', async () => {
    let handled = false;
    const app = appWith({
      method: 'GET',
      path: '/books/:id',
      schema: {
        params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } } },
        querystring: { type: 'object', properties: { year: { type: 'integer' } }, required: ['year'] },
      },
      handler: () => {
        handled = true;
      },
    });
    const res = await app.inject('/books/abc');
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    const body = res.json();
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.title, 'Validation Failed');
    assert.match(body.detail, /^params \/id: must be integer \(and 1 more\)$/);
    assert.deepEqual(body.details.errors, [
      { in: 'params', path: '/id', message: 'must be integer', keyword: 'type', params: { type: 'integer' } },
      {
        in: 'querystring',
        path: '/year',
        message: "must have required property 'year'",
        keyword: 'required',
        params: { missingProperty: 'year' },
      },
    ]);
    assert.equal(handled, false);
  });

  test('the body is validated exactly, without coercion', async () => {
    const app = appWith({ method: 'POST', path: '/books', schema: { body: book }, handler: (ctx) => ctx.created(ctx.body) });
    const post = (payload: unknown) =>
      app.inject({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const ok = await post({ title: 'Dune', year: 1965 });
    assert.equal(ok.statusCode, 201);
    assert.deepEqual(ok.json(), { title: 'Dune', year: 1965 });

    const coerced = await post({ title: 'Dune', year: '1965' });
    assert.equal(coerced.statusCode, 400);
    assert.deepEqual(coerced.json().details.errors, [
      { in: 'body', path: '/year', message: 'must be integer', keyword: 'type', params: { type: 'integer' } },
    ]);

    const many = await post({ title: '', extra: 1, tags: [1] });
    assert.equal(many.statusCode, 400);
    const paths = many.json().details.errors.map((e: { path: string }) => e.path);
    assert.deepEqual(paths.sort(), ['/extra', '/tags/0', '/title', '/year'].sort());
  });

  test('a route with a body schema and no body answers 400, not a crash', async () => {
    const app = appWith({ method: 'POST', path: '/books', schema: { body: book }, handler: () => 'x' });
    const res = await app.inject({ method: 'POST', url: '/books' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'VALIDATION_FAILED');
  });

  test('params and query are validated before the middlewares run', async () => {
    let middlewareRan = false;
    const app = appWith({
      method: 'GET',
      path: '/n/:n',
      schema: { params: { type: 'object', properties: { n: { type: 'integer' } } } },
      middlewares: [
        (_ctx, next) => {
          middlewareRan = true;
          return next();
        },
      ],
      handler: (ctx) => ctx.params,
    });
    assert.equal((await app.inject('/n/x')).statusCode, 400);
    assert.equal(middlewareRan, false);
  });

  test('an invalid schema fails at registration', () => {
    const { app } = testApp();
    assert.throws(() =>
      app.registerController(controller({ method: 'GET', path: '/bad', schema: { querystring: { type: 'nonsense' } }, handler: () => 1 })),
    );
  });
});
