import { type TestContext, test } from 'node:test';
import type { Middleware, RequestHook, Route } from '../../../src/app/core/route.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { testApp } from '../../helpers/app.ts';

const requireUser: Middleware<{ user: string }> = async (ctx, next) => {
  if (ctx.headers.authorization !== 'Bearer ursula') throw KError.unauthorized('who are you?');
  ctx.state.user = 'ursula';
  await next();
};

test('group.route registers one route under the group: prefix, middlewares, hooks and security', async (t: TestContext) => {
  const { app } = testApp({ docs: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } });
  t.after(() => app.close());
  const order: string[] = [];
  const notes = app.group('/notes', { security: [{ bearer: [] }] }, requireUser);
  notes.onRequest(() => void order.push('hook'));
  notes.route({
    method: 'GET',
    path: '/:id',
    handler: (ctx) => {
      order.push('handler');
      return { id: ctx.params.id, user: ctx.state.user };
    },
  });

  const served = await app.inject({ url: '/notes/7', headers: { authorization: 'Bearer ursula' } });
  t.assert.deepStrictEqual(served.json(), { id: '7', user: 'ursula' });
  t.assert.deepStrictEqual(order, ['hook', 'handler']);
  t.assert.strictEqual((await app.inject('/notes/7')).statusCode, 401, "the group's middleware ran");
  t.assert.deepStrictEqual(
    app.routes.filter((r) => r.path.startsWith('/notes')).map((r) => [r.method, r.path, r.security]),
    [['GET', '/notes/:id', [{ bearer: [] }]]],
  );
});

test('group.defineRoute returns its route unregistered, for registerController', async (t: TestContext) => {
  const { app } = testApp();
  t.after(() => app.close());
  const notes = app.group('/notes', requireUser);
  const route: Route = { method: 'GET', path: '/', handler: (ctx) => [ctx.state['user']] };
  t.assert.strictEqual(notes.defineRoute(route), route);
  t.assert.deepStrictEqual(
    app.routes.filter((r) => r.path.startsWith('/notes')),
    [],
    'nothing registered yet',
  );
  notes.registerController({ routes: () => [notes.defineRoute(route)] });
  t.assert.deepStrictEqual((await app.inject({ url: '/notes', headers: { authorization: 'Bearer ursula' } })).json(), ['ursula']);
});

test("a group's onRequest option hooks run as its own hooks: after the App's and the enclosing groups', before those added later", async (t: TestContext) => {
  const { app } = testApp();
  t.after(() => app.close());
  const order: string[] = [];
  const hook =
    (name: string): RequestHook =>
    () =>
      void order.push(name);
  app.onRequest(hook('app'));
  const api = app.group('/api', { onRequest: [hook('api option')] });
  const loadTenant: RequestHook<{ tenant: string }> = (ctx) => {
    order.push('tenants option');
    ctx.state.tenant = 'acme';
  };
  const tenants = api.group('/tenants', { onRequest: [loadTenant, hook('second option')] });
  tenants.onRequest(hook('added'));
  tenants.route({
    method: 'GET',
    path: '/current',
    onRequest: [hook('route')],
    handler: (ctx) => {
      order.push('handler');
      return { tenant: ctx.state.tenant };
    },
  });
  api.route({ method: 'GET', path: '/other', handler: () => void order.push('other') });

  t.assert.deepStrictEqual((await app.inject('/api/tenants/current')).json(), { tenant: 'acme' });
  t.assert.deepStrictEqual(order, ['app', 'api option', 'tenants option', 'second option', 'added', 'route', 'handler']);
  order.length = 0;
  await app.inject('/api/other');
  t.assert.deepStrictEqual(order, ['app', 'api option', 'other'], "a subgroup's hooks stay out of its parent's routes");
});

test('a bad onRequest option is refused when the group is made', (t: TestContext) => {
  const { app } = testApp();
  t.assert.throws(() => app.group('/api', { onRequest: (() => {}) as never }), { code: 'FLO_ERR_BAD_GROUP_OPTION' });
  t.assert.throws(() => app.group('/api', { onRequest: [null as never] }), { code: 'FLO_ERR_BAD_HOOK' });
  t.assert.throws(() => app.group('/api').group('/v1', { onRequest: ['nope' as never] }), { code: 'FLO_ERR_BAD_HOOK' });
});
