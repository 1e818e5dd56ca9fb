import { describe, type TestContext, test } from 'node:test';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

const BOOK_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: { title: { type: 'string', minLength: 1 } },
  required: ['title'],
} as const;
const LIST_QUERY = { type: 'object', properties: { limit: { type: 'integer', maximum: 10 } } } as const;

/** An App whose `/books` routes need `authorization: Bearer ok`, checked by an App-level onRequest hook. */
function guarded() {
  const { app, logs } = testApp();
  const seen: string[] = [];
  app.onRequest((ctx) => {
    seen.push(`hook ${ctx.route || '(none)'}`);
    if (ctx.headers.authorization !== 'Bearer ok') throw KError.unauthorized('a bearer token is required');
  });
  app.registerController(
    controller(
      {
        method: 'POST',
        path: '/books',
        schema: { body: BOOK_BODY },
        handler: (ctx) => {
          seen.push('handler');
          return ctx.body;
        },
      },
      { method: 'GET', path: '/books', schema: { querystring: LIST_QUERY }, handler: () => [] },
    ),
  );
  return { app, logs, seen };
}

describe('onRequest hooks', () => {
  test('answer 401 before a bad body is read or validated', async (t: TestContext) => {
    const { app, seen } = guarded();
    const res = await app.inject({ method: 'POST', url: '/books', payload: { title: '', extra: 'x' } });
    t.assert.strictEqual(res.statusCode, 401);
    t.assert.strictEqual(res.json().code, 'UNAUTHORIZED');
    t.assert.doesNotMatch(res.body, /extra|fewer than|body/, 'nothing about the body reaches an anonymous client');
    t.assert.deepStrictEqual(seen, ['hook /books']);
    const ok = await app.inject({ method: 'POST', url: '/books', headers: { authorization: 'Bearer ok' }, payload: { title: 'Dune' } });
    t.assert.strictEqual(ok.statusCode, 200);
    const bad = await app.inject({ method: 'POST', url: '/books', headers: { authorization: 'Bearer ok' }, payload: { title: '' } });
    t.assert.strictEqual(bad.statusCode, 400, 'an authorized client gets the validation problem');
    await app.close();
  });

  test('answer 401 before a bad query is validated', async (t: TestContext) => {
    const { app } = guarded();
    const res = await app.inject({ method: 'GET', url: '/books?limit=999' });
    t.assert.strictEqual(res.statusCode, 401);
    t.assert.doesNotMatch(res.body, /limit/);
    const bad = await app.inject({ method: 'GET', url: '/books?limit=999', headers: { authorization: 'Bearer ok' } });
    t.assert.strictEqual(bad.statusCode, 400);
    await app.close();
  });

  test('run App, group and route hooks in that order; a reply chosen by one ends the request', async (t: TestContext) => {
    const { app } = testApp();
    const order: string[] = [];
    app.onRequest(() => void order.push('app'));
    const admin = app.group('/admin');
    admin.registerController(
      controller({
        method: 'GET',
        path: '/report',
        onRequest: [
          async (ctx: Ctx) => {
            await new Promise((r) => setTimeout(r, 5));
            order.push('route');
            if (ctx.query['stop'] === '1') ctx.status(403).send('stopped by the route hook');
          },
        ],
        handler: () => {
          order.push('handler');
          return { ok: true };
        },
      }),
    );
    // a hook added after the routes still applies to them
    admin.onRequest(() => void order.push('group'));
    const res = await app.inject('/admin/report');
    t.assert.deepStrictEqual(res.json(), { ok: true });
    t.assert.deepStrictEqual(order, ['app', 'group', 'route', 'handler']);
    order.length = 0;
    const stopped = await app.inject('/admin/report?stop=1');
    t.assert.strictEqual(stopped.statusCode, 403);
    t.assert.strictEqual(stopped.body, 'stopped by the route hook');
    t.assert.deepStrictEqual(order, ['app', 'group', 'route'], 'the handler never ran');
    await app.close();
  });

  test('App-level hooks run for unmatched paths too, but not for /health', async (t: TestContext) => {
    const { app, seen } = guarded();
    t.assert.strictEqual((await app.inject('/nowhere')).statusCode, 401);
    const wrongMethod = await app.inject({ method: 'DELETE', url: '/books' });
    t.assert.strictEqual(wrongMethod.statusCode, 401, 'no Allow header maps the routes for an anonymous client');
    t.assert.strictEqual(wrongMethod.headers['allow'], undefined);
    t.assert.strictEqual((await app.inject('/health')).statusCode, 200, 'probes need no token');
    t.assert.deepStrictEqual(seen, ['hook (none)', 'hook (none)']);
    await app.close();
  });

  test('a hook that is not a function is refused when added', (t: TestContext) => {
    const { app } = testApp();
    t.assert.throws(() => app.onRequest('auth' as never), { code: 'FLO_ERR_BAD_HOOK', message: /onRequest expects a function/ });
    t.assert.throws(() => app.group('/g').onRequest(null as never), { code: 'FLO_ERR_BAD_HOOK' });
    t.assert.throws(() => app.registerController(controller({ method: 'GET', path: '/x', onRequest: [42 as never], handler: () => 1 })), {
      code: 'FLO_ERR_BAD_HOOK',
      message: /route GET \/x/,
    });
    t.assert.throws(() => app.setErrorHandler(undefined as never), { code: 'FLO_ERR_BAD_HOOK' });
  });
});

class OutOfStock extends Error {}

describe('setErrorHandler', () => {
  test('maps a domain error to a problem before the default boundary', async (t: TestContext) => {
    const { app, logs } = testApp();
    const mapped: unknown[] = [];
    app.setErrorHandler((error) => {
      mapped.push(error);
      return error instanceof OutOfStock ? KError.conflict(error.message) : undefined;
    });
    app.registerController(
      controller(
        {
          method: 'POST',
          path: '/orders',
          handler: () => {
            throw new OutOfStock('no copies left');
          },
        },
        {
          method: 'GET',
          path: '/boom',
          handler: async () => {
            throw new Error('database password is hunter2');
          },
        },
      ),
    );
    const res = await app.inject({ method: 'POST', url: '/orders' });
    t.assert.strictEqual(res.statusCode, 409);
    t.assert.strictEqual(res.json().detail, 'no copies left');
    const other = await app.inject('/boom');
    t.assert.strictEqual(other.statusCode, 500, 'undefined leaves the error to the default boundary');
    t.assert.strictEqual(mapped.length, 2);
    t.assert.ok(logs.lines.some((l) => l.msg === 'request failed'));
    await app.close();
  });

  test('may answer itself, and runs at most once per request', async (t: TestContext) => {
    const { app } = testApp();
    let calls = 0;
    app.setErrorHandler(async (_error, ctx) => {
      calls++;
      ctx.status(418).send('teapot');
    });
    app.registerController(
      controller({
        method: 'GET',
        path: '/x',
        handler: () => {
          throw new Error('x');
        },
      }),
    );
    const res = await app.inject('/x');
    t.assert.strictEqual(res.statusCode, 418);
    t.assert.strictEqual(res.body, 'teapot');
    t.assert.strictEqual(calls, 1);
    await app.close();
  });

  test('an error thrown inside it becomes the default 500, detail hidden in production', async (t: TestContext) => {
    const { app, logs } = testApp({ env: 'production' });
    let calls = 0;
    app.setErrorHandler(() => {
      calls++;
      throw KError.badRequest('the handler itself failed');
    });
    app.registerController(
      controller({
        method: 'GET',
        path: '/x',
        handler: () => {
          throw new Error('secret detail');
        },
      }),
    );
    const res = await app.inject('/x');
    t.assert.strictEqual(res.statusCode, 500);
    t.assert.doesNotMatch(res.body, /secret detail|the handler itself failed/);
    t.assert.strictEqual(calls, 1);
    const logged = logs.lines.find((l) => l.msg === 'request failed');
    t.assert.match(JSON.stringify(logged), /the error handler threw/);
    await app.close();
  });
});

describe('setNotFoundHandler', () => {
  test('answers unmatched paths with 404 unless it sets another status; 405 stays the router’s', async (t: TestContext) => {
    const { app } = testApp();
    app.setNotFoundHandler((ctx) => ({ error: 'nothing here', path: ctx.path }));
    app.registerController(controller({ method: 'GET', path: '/books', handler: () => [] }));
    const res = await app.inject('/nope?x=1');
    t.assert.strictEqual(res.statusCode, 404);
    t.assert.deepStrictEqual(res.json(), { error: 'nothing here', path: '/nope' });
    const wrongMethod = await app.inject({ method: 'DELETE', url: '/books' });
    t.assert.strictEqual(wrongMethod.statusCode, 405);
    await app.close();

    const { app: other } = testApp();
    other.setNotFoundHandler(async (ctx) => {
      ctx.status(410).send('gone for good');
    });
    const gone = await other.inject('/old');
    t.assert.strictEqual(gone.statusCode, 410);
    t.assert.strictEqual(gone.body, 'gone for good');
    await other.close();
  });
});
