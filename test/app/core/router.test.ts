import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { App } from '../../../src/app/app.ts';
import type { Module } from '../../../src/app/core/registrar.ts';
import { joinPath, type Middleware } from '../../../src/app/core/route.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

/** A middleware that records its name on the way in and out. */
function tracing(name: string, trail: string[]): Middleware {
  return async (_ctx, next) => {
    trail.push(`${name}>`);
    await next();
    trail.push(`<${name}`);
  };
}

const who = { method: 'GET', path: '/who', handler: (ctx: { path: string }) => ({ path: ctx.path }) } as const;

describe('registerController', () => {
  test('routes answer with their params and query', async () => {
    const { app } = testApp();
    app.registerController(
      controller({ method: 'GET', path: '/books/:id/chapters/:n', handler: (ctx) => ({ params: ctx.params, query: ctx.query }) }),
    );
    const res = await app.inject('/books/dune/chapters/3?lang=en&tag=a&tag=b');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { params: { id: 'dune', n: '3' }, query: { lang: 'en', tag: ['a', 'b'] } });
  });

  test('every method can be routed', async () => {
    const { app } = testApp();
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
    app.registerController(controller(...methods.map((method) => ({ method, path: '/m', handler: () => ({ method }) }))));
    for (const method of methods) assert.deepEqual((await app.inject({ method, url: '/m' })).json(), { method });
  });

  test('an explicit HEAD route replaces the automatic one', async () => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'GET', path: '/files/:name', handler: () => 'body' },
        { method: 'HEAD', path: '/files/:name', handler: (ctx) => ctx.status(204).setHeader('X-Head', 'explicit') },
      ),
    );
    const res = await app.inject({ method: 'HEAD', url: '/files/a' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['x-head'], 'explicit');
  });

  test('a GET registered after its HEAD keeps the explicit HEAD, also on a path with a regex parameter', async () => {
    const { app } = testApp();
    app.registerController(
      controller(
        { method: 'HEAD', path: '/items/:id(^\\d+)', handler: (ctx) => ctx.status(204).setHeader('X-Head', 'explicit') },
        { method: 'GET', path: '/items/:id(^\\d+)', handler: (ctx) => ({ id: ctx.params['id'] }) },
      ),
    );
    assert.deepEqual((await app.inject('/items/12')).json(), { id: '12' });
    const head = await app.inject({ method: 'HEAD', url: '/items/12' });
    assert.equal(head.headers['x-head'], 'explicit');
    assert.equal((await app.inject('/items/abc')).statusCode, 404);
  });

  test('a duplicate route is refused at registration, naming it', () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/dup', handler: () => 1 }));
    assert.throws(() => app.registerController(controller({ method: 'GET', path: '/dup', handler: () => 2 })), /cannot register GET \/dup/);
  });

  test('malformed routes are refused at registration', () => {
    const { app } = testApp();
    const bad = [
      { method: 'FETCH', path: '/x', handler: () => 1 },
      { method: 'GET', path: 'x', handler: () => 1 },
      { method: 'GET', path: '/x', handler: 'nope' },
      { method: 'GET', path: '/x', handler: () => 1, middlewares: ['nope'] },
    ];
    for (const route of bad) assert.throws(() => app.registerController(controller(route as never)), TypeError, JSON.stringify(route));
  });

  test('dangerous patterns are rejected at registration', () => {
    const { app } = testApp();
    for (const path of ['/:a-:b', '/files/:name.:ext', '/x/:a:b']) {
      assert.throws(
        () => app.registerController(controller({ method: 'GET', path, handler: () => 1 })),
        /one parameter per path segment/,
        path,
      );
    }
    assert.throws(
      () => app.registerController(controller({ method: 'GET', path: '/r/:id(([a-z]+)+$)', handler: () => 1 })),
      /cannot register GET \/r\/:id.*not safe/,
    );
    assert.equal(
      app.routes.some((r) => r.path.startsWith('/r/') || r.path.includes(':a')),
      false,
    );
  });

  test('an escaped colon is not a parameter', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/v1/books::search', handler: () => 'search' }));
    assert.equal((await app.inject('/v1/books:search')).body, '"search"');
  });

  test('a route parameter longer than limits.paramLength finds no route', async () => {
    const { app } = testApp({ limits: { paramLength: 10 } });
    app.registerController(controller({ method: 'GET', path: '/tags/:tag', handler: (ctx) => ctx.params }));
    assert.equal((await app.inject(`/tags/${'a'.repeat(10)}`)).statusCode, 200);
    const res = await app.inject(`/tags/${'a'.repeat(11)}`);
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.json().detail, 'a route parameter is too long');
    assert.equal(res.json().code, 'PARAM_TOO_LONG');
    assert.equal(res.json().type, 'urn:flotilla:problem:param-too-long');
  });

  test('the default maximum parameter length is 100', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/tags/:tag', handler: (ctx) => ctx.params }));
    assert.equal((await app.inject(`/tags/${'a'.repeat(100)}`)).statusCode, 200);
    assert.equal((await app.inject(`/tags/${'a'.repeat(101)}`)).statusCode, 404);
  });

  test('paths are case sensitive and a trailing slash is another path', async () => {
    const { app } = testApp();
    app.registerController(controller({ method: 'GET', path: '/Books', handler: () => 'x' }));
    assert.equal((await app.inject('/Books')).statusCode, 200);
    assert.equal((await app.inject('/books')).statusCode, 404);
    assert.equal((await app.inject('/Books/')).statusCode, 404);
  });
});

describe('groups', () => {
  test('group(prefix) prefixes its routes', async () => {
    const { app } = testApp();
    const api = app.group('/api');
    api.registerController(controller(who, { method: 'GET', path: '/', handler: () => 'root' }));
    assert.deepEqual((await app.inject('/api/who')).json(), { path: '/api/who' });
    assert.equal((await app.inject('/api')).body, '"root"');
    assert.equal((await app.inject('/who')).statusCode, 404);
    assert.equal(joinPath('/api/', '/x'), '/api/x');
  });

  test('nested groups join prefixes and run outer middlewares first', async () => {
    const { app } = testApp();
    const trail: string[] = [];
    const v1 = app.group('/v1', tracing('v1', trail));
    const admin = v1.group('/admin', tracing('admin', trail));
    admin.registerController(
      controller({
        method: 'GET',
        path: '/users/:id',
        middlewares: [tracing('route', trail)],
        handler: (ctx) => {
          trail.push('handler');
          return { id: ctx.params['id'] };
        },
      }),
    );
    const res = await app.inject('/v1/admin/users/9');
    assert.deepEqual(res.json(), { id: '9' });
    assert.deepEqual(trail, ['v1>', 'admin>', 'route>', 'handler', '<route', '<admin', '<v1']);
    assert.equal(admin.prefix, '/v1/admin');
  });

  test('group middlewares do not leak to sibling groups or the App', async () => {
    const { app } = testApp();
    const trail: string[] = [];
    app.group('/a', tracing('a', trail)).registerController(controller(who));
    app.group('/b').registerController(controller(who));
    app.registerController(controller(who));
    await app.inject('/b/who');
    await app.inject('/who');
    assert.deepEqual(trail, []);
    await app.inject('/a/who');
    assert.deepEqual(trail, ['a>', '<a']);
  });

  test('a middleware that does not call next ends the request with its own reply', async () => {
    const { app } = testApp();
    let handled = false;
    const requireKey: Middleware = (ctx, next) => {
      if (ctx.headers['x-api-key'] !== 'secret') throw KError.unauthorized('missing API key');
      return next();
    };
    const cached: Middleware = (ctx) => ctx.ok({ cached: true });
    app.group('/private', requireKey).registerController(
      controller({
        method: 'GET',
        path: '/data',
        handler: () => {
          handled = true;
          return { fresh: true };
        },
      }),
    );
    app.group('/cache', cached).registerController(controller({ method: 'GET', path: '/data', handler: () => ({ fresh: true }) }));
    const denied = await app.inject('/private/data');
    assert.equal(denied.statusCode, 401);
    assert.equal(denied.json().detail, 'missing API key');
    assert.equal(handled, false);
    assert.deepEqual((await app.inject({ url: '/private/data', headers: { 'x-api-key': 'secret' } })).json(), { fresh: true });
    assert.deepEqual((await app.inject('/cache/data')).json(), { cached: true });
  });

  test('middlewares see the reply on the way out and can add headers; ctx.state passes data to the handler', async () => {
    const { app } = testApp();
    const auth: Middleware = async (ctx, next) => {
      ctx.state['user'] = 'ada';
      await next();
      ctx.setHeader('X-Reply-Kind', ctx.reply.kind).setHeader('X-Status', String(ctx.statusCode));
    };
    app
      .group('/me', auth)
      .registerController(controller({ method: 'GET', path: '/', handler: (ctx) => ctx.created({ user: ctx.state['user'] }) }));
    const res = await app.inject('/me');
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json(), { user: 'ada' });
    assert.equal(res.headers['x-reply-kind'], 'json');
    assert.equal(res.headers['x-status'], '201');
  });

  test('a module registered in a group lands under its prefix and middlewares, and sees the App for the rest', async () => {
    const { app } = testApp();
    const trail: string[] = [];
    const hooks: string[] = [];
    const books: Module = {
      register(scoped: App) {
        scoped.registerController(controller(who));
        scoped.group('/archive').registerController(controller(who));
        scoped.use({
          register: (inner) => inner.registerController(controller({ method: 'GET', path: '/inner', handler: () => 'inner' })),
        });
        scoped.onShutdown(() => {
          hooks.push('books');
        });
        assert.equal(scoped.config, app.config);
        assert.equal(scoped.logger, app.logger);
      },
    };
    app.group('/shop', tracing('shop', trail)).use(books);
    assert.deepEqual((await app.inject('/shop/who')).json(), { path: '/shop/who' });
    assert.deepEqual((await app.inject('/shop/archive/who')).json(), { path: '/shop/archive/who' });
    assert.equal((await app.inject('/shop/inner')).body, '"inner"');
    assert.equal((await app.inject('/who')).statusCode, 404);
    assert.deepEqual(trail, ['shop>', '<shop', 'shop>', '<shop', 'shop>', '<shop']);
    await app.close();
    assert.deepEqual(hooks, ['books']);
  });

  test('group prefixes and middlewares are checked', () => {
    const { app } = testApp();
    assert.throws(() => app.group('api'), TypeError);
    assert.throws(() => app.group('/api', 'nope' as never), TypeError);
  });

  test('group route parameters reach the handler', async () => {
    const { app } = testApp();
    app.group('/tenants/:tenant').registerController(controller({ method: 'GET', path: '/books/:id', handler: (ctx) => ctx.params }));
    assert.deepEqual((await app.inject('/tenants/acme/books/1')).json(), { tenant: 'acme', id: '1' });
  });
});
