import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Middleware } from '../../../src/app/core/route.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

const PROBLEM = 'application/problem+json';

describe('error handler', () => {
  test('a KError becomes an RFC 9457 problem with code, requestId and its message as detail', async () => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/books/:id',
        handler: (ctx) => {
          throw KError.notFound(`book ${ctx.params['id']} does not exist`, { details: { id: ctx.params['id'] } });
        },
      }),
    );
    const res = await app.inject({ url: '/books/42', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.deepEqual(res.json(), {
      type: 'urn:flotilla:problem:not-found',
      title: 'Not Found',
      status: 404,
      detail: 'book 42 does not exist',
      instance: '/books/42',
      code: 'NOT_FOUND',
      requestId: 'abc-123',
      details: { id: '42' },
    });
  });

  test("a KError's headers are sent with the problem", async () => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/limited',
        handler: () => {
          throw KError.tooManyRequests('slow down', { headers: { 'Retry-After': '30' } });
        },
      }),
    );
    const res = await app.inject('/limited');
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '30');
  });

  test('any other error is a 500 problem, its message hidden in production and logged with its stack', async () => {
    for (const env of ['development', 'production'] as const) {
      const { app, logs } = testApp({ env });
      app.registerController(
        controller({
          method: 'GET',
          path: '/boom',
          handler: () => {
            throw new Error('secret connection string postgres://u:p@db');
          },
        }),
      );
      const res = await app.inject('/boom');
      assert.equal(res.statusCode, 500);
      assert.equal(res.headers['content-type'], PROBLEM);
      const body = res.json();
      assert.equal(body.code, 'INTERNAL');
      assert.equal(body.title, 'Internal Server Error');
      assert.equal(body.requestId, res.headers['x-request-id']);
      if (env === 'production') {
        assert.doesNotMatch(res.body, /secret|postgres|at /);
        assert.equal(body.detail, 'An internal error occurred.');
      } else {
        assert.equal(body.detail, 'secret connection string postgres://u:p@db');
      }
      const logged = await logs.waitFor((l) => l['msg'] === 'request failed');
      assert.equal(logged['level'], 'error');
      assert.equal(logged['route'], '/boom');
      assert.equal(logged['requestId'], body.requestId);
      assert.match(String((logged['err'] as { stack: string }).stack), /secret connection string[\s\S]*pipeline\.test\.ts/);
    }
  });

  test('a 4xx KError is not logged as a failure', async () => {
    const { app, logs } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/nope',
        handler: () => {
          throw KError.forbidden();
        },
      }),
    );
    assert.equal((await app.inject('/nope')).statusCode, 403);
    await logs.waitFor((l) => l['msg'] === 'request completed');
    assert.equal(
      logs.lines.some((l) => l['msg'] === 'request failed'),
      false,
    );
  });

  test('a problem replaces the content headers the handler had set', async () => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/half',
        handler: (ctx) => {
          ctx.setHeader('Content-Type', 'text/csv').setHeader('Content-Disposition', 'attachment').setHeader('X-Kept', 'yes');
          throw KError.conflict();
        },
      }),
    );
    const res = await app.inject('/half');
    assert.equal(res.statusCode, 409);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.equal(res.headers['content-disposition'], undefined);
    assert.equal(res.headers['x-kept'], 'yes');
  });

  test('details that cannot be serialized still give a 500 problem, and the app keeps serving', async () => {
    const { app } = testApp();
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    app.registerController(
      controller(
        {
          method: 'GET',
          path: '/bigint',
          handler: () => {
            throw KError.badRequest('bad', { details: { n: 1n } });
          },
        },
        {
          method: 'GET',
          path: '/circular',
          handler: () => {
            throw KError.conflict('bad', { details: circular });
          },
        },
        {
          method: 'GET',
          path: '/bad-header',
          handler: () => {
            throw KError.unavailable('later', { headers: { 'Retry-After': 'a\nb' } });
          },
        },
        { method: 'GET', path: '/ok', handler: () => 'fine' },
      ),
    );
    for (const url of ['/bigint', '/circular', '/bad-header']) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 500, url);
      assert.equal(res.headers['content-type'], PROBLEM);
      assert.equal(res.json().code, 'INTERNAL');
    }
    assert.equal((await app.inject('/ok')).body, '"fine"');
  });

  test('a reply that cannot be serialized is a 500 problem', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/big', handler: () => ({ n: 10n }) }));
    const res = await app.inject('/big');
    assert.equal(res.statusCode, 500);
    assert.equal(res.json().code, 'INTERNAL');
  });
});

describe('recovery', () => {
  const thrower: Middleware = () => {
    throw new Error('middleware exploded');
  };
  const rejecter: Middleware = async () => {
    await Promise.resolve();
    throw new TypeError('async middleware exploded');
  };

  test('a throw or rejection in any handler or middleware becomes a 500 and the app keeps serving', async () => {
    const { app } = testApp();
    app.registerController(
      controller(
        {
          method: 'GET',
          path: '/sync',
          handler: () => {
            throw new Error('sync');
          },
        },
        { method: 'GET', path: '/async', handler: async () => Promise.reject(new Error('async')) },
        { method: 'GET', path: '/string', handler: () => Promise.reject('a plain string') },
        { method: 'GET', path: '/mw', handler: () => 'unreachable', middlewares: [thrower] },
        { method: 'GET', path: '/mw-async', handler: () => 'unreachable', middlewares: [rejecter] },
        {
          method: 'GET',
          path: '/after',
          handler: () => 'x',
          middlewares: [
            async (_ctx, next) => {
              await next();
              throw new Error('on the way out');
            },
          ],
        },
        { method: 'GET', path: '/fine', handler: () => ({ still: 'serving' }) },
      ),
    );
    for (const url of ['/sync', '/async', '/string', '/mw', '/mw-async', '/after']) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 500, url);
      assert.equal(res.headers['content-type'], PROBLEM, url);
    }
    const fine = await app.inject('/fine');
    assert.equal(fine.statusCode, 200);
    assert.deepEqual(fine.json(), { still: 'serving' });
  });

  test('a middleware calling next() twice is a 500, not a double response', async () => {
    const { app } = testApp();
    let calls = 0;
    app.registerController(
      controller({
        method: 'GET',
        path: '/twice',
        handler: () => {
          calls++;
          return 'x';
        },
        middlewares: [
          async (_ctx, next) => {
            await next();
            await next();
          },
        ],
      }),
    );
    const res = await app.inject('/twice');
    assert.equal(res.statusCode, 500);
    assert.equal(calls, 1);
  });
});

describe('request ids', () => {
  test('a sane incoming X-Request-Id is kept and echoed', async () => {
    const { app } = testApp();
    const id = 'trace-0123_ABC.def:~!';
    const res = await app.inject({ url: '/health', headers: { 'x-request-id': id } });
    assert.equal(res.headers['x-request-id'], id);
    const max = 'x'.repeat(128);
    assert.equal((await app.inject({ url: '/health', headers: { 'x-request-id': max } })).headers['x-request-id'], max);
  });

  test('a missing, too long or non-visible-ASCII id is replaced by a generated one', async () => {
    const { app } = testApp();
    const ids = new Set<string>();
    for (const incoming of [undefined, 'x'.repeat(129), 'has space', 'tab\there', 'é', '']) {
      const headers: Record<string, string> = incoming === undefined ? {} : { 'x-request-id': incoming };
      const res = await app.inject({ url: '/nope', headers });
      const id = String(res.headers['x-request-id']);
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, `for ${incoming}`);
      assert.equal(res.json().requestId, id);
      ids.add(id);
    }
    assert.equal(ids.size, 6);
  });
});

describe('404 and 405', () => {
  test('an unknown path is a 404 problem naming method and path', async () => {
    const { app } = testApp();
    const res = await app.inject({ method: 'GET', url: '/nowhere?x=1' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], PROBLEM);
    const body = res.json();
    assert.equal(body.code, 'ROUTE_NOT_FOUND');
    assert.equal(body.detail, 'no route for GET /nowhere');
    assert.equal(body.instance, '/nowhere');
  });

  test('a known path with another method is a 405 problem with Allow', async () => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'GET', path: '/books/:id', handler: () => ({}) },
        { method: 'DELETE', path: '/books/:id', handler: (ctx) => ctx.noContent() },
      ),
    );
    const res = await app.inject({ method: 'POST', url: '/books/1' });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.equal(res.headers['allow'], 'GET, DELETE, HEAD');
    assert.equal(res.json().code, 'METHOD_NOT_ALLOWED');
  });

  test('a malformed URL is a 400 problem', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/files/:name', handler: (ctx) => ctx.params }));
    const res = await app.inject('/files/%E0%A4%A');
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'BAD_URL');
  });
});

describe('responses', () => {
  test('ok, created, noContent, status and setHeader', async () => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'GET', path: '/ok', handler: (ctx) => ctx.ok({ a: 1 }) },
        { method: 'POST', path: '/created', handler: (ctx) => ctx.created({ id: 7 }) },
        { method: 'DELETE', path: '/gone', handler: (ctx) => ctx.noContent() },
        { method: 'GET', path: '/teapot', handler: (ctx) => ctx.status(418).setHeader('X-Brew', 'tea').ok({ short: 'stout' }) },
        { method: 'GET', path: '/accepted', handler: (ctx) => ctx.status(202).setHeader('Location', '/jobs/1') },
        { method: 'GET', path: '/returned', handler: () => [1, 2] },
        { method: 'GET', path: '/null', handler: () => null },
        { method: 'GET', path: '/text', handler: (ctx) => ctx.send('plain') },
        {
          method: 'GET',
          path: '/bad-status',
          handler: (ctx) => {
            ctx.status(99);
          },
        },
      ),
    );
    const ok = await app.inject('/ok');
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(ok.body, '{"a":1}');
    const created = await app.inject({ method: 'POST', url: '/created' });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.json(), { id: 7 });
    const gone = await app.inject({ method: 'DELETE', url: '/gone' });
    assert.equal(gone.statusCode, 204);
    assert.equal(gone.body, '');
    assert.equal(gone.headers['content-type'], undefined);
    const teapot = await app.inject('/teapot');
    assert.equal(teapot.statusCode, 200, 'ok() sets 200 even after status()');
    assert.equal(teapot.headers['x-brew'], 'tea');
    const accepted = await app.inject('/accepted');
    assert.equal(accepted.statusCode, 202);
    assert.equal(accepted.headers['location'], '/jobs/1');
    assert.equal(accepted.body, '');
    assert.deepEqual((await app.inject('/returned')).json(), [1, 2]);
    assert.equal((await app.inject('/null')).body, 'null');
    const text = await app.inject('/text');
    assert.equal(text.body, 'plain');
    assert.match(String(text.headers['content-type']), /^text\/plain/);
    assert.equal((await app.inject('/bad-status')).statusCode, 500);
  });

  test('HEAD is answered for every GET route, without a body', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/books', handler: () => [{ id: 1 }] }));
    const res = await app.inject({ method: 'HEAD', url: '/books' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(res.headers['content-length'], String('[{"id":1}]'.length));
  });
});
