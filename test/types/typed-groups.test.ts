import { type TestContext, test } from 'node:test';
import { expectTypeOf } from 'expect-type';
import {
  type Controller,
  defineRoute,
  type Group,
  type GroupOf,
  KError,
  type Middleware,
  type RequestHook,
  type RequestState,
  type Route,
  type TypedGroup,
} from '../../src/index.ts';
import { testApp } from '../helpers/app.ts';

/*
 * Type tests of a group's state (see routes.test.ts for how they are checked): what a group's
 * middlewares and `onRequest` option hooks declare types `ctx.state` in every route of the group,
 * with no declaration merging and nothing repeated on the routes. The node:test part serves the
 * same routes and checks that the state is there at run time.
 */

interface User {
  id: string;
  name: string;
}
const requireUser: Middleware<{ user: User }> = async (ctx, next) => {
  if (ctx.headers.authorization !== 'Bearer ursula') throw KError.unauthorized('who are you?');
  ctx.state.user = { id: 'u1', name: 'ursula' };
  await next();
};
const loadTenant: RequestHook<{ tenant: string }> = (ctx) => {
  ctx.state.tenant = String(ctx.headers['x-tenant'] ?? 'acme');
};
const audit: Middleware<{ audit: string[] }> = async (ctx, next) => {
  ctx.state.audit = [`${ctx.method} ${ctx.path}`];
  await next();
};
const timing: Middleware = async (_ctx, next) => {
  await next();
};
const untypedHook: RequestHook = () => {};

// a typed hook is a hook, and the App, a group and a route take it
expectTypeOf(loadTenant).toExtend<RequestHook>();

function register(app: ReturnType<typeof testApp>['app']): void {
  // the group's middleware types ctx.state in its routes
  const notes = app.group('/notes', timing, requireUser);
  expectTypeOf(notes).toEqualTypeOf<TypedGroup<{ user: User }>>();
  expectTypeOf(notes).toExtend<Group>();
  notes.route({
    method: 'GET',
    path: '/:id',
    handler: (ctx) => {
      expectTypeOf(ctx.state).toEqualTypeOf<RequestState & { user: User }>();
      expectTypeOf(ctx.params).toEqualTypeOf<{ id: string }>();
      // @ts-expect-error no middleware or hook of the group declares a tenant
      const tenant: string = ctx.state.tenant;
      return { note: ctx.params.id, owner: ctx.state.user.name, tenant };
    },
  });
  notes.route({
    method: 'PUT',
    path: '/:id/owner',
    handler: (ctx) => {
      // @ts-expect-error the user is a User, not a string
      ctx.state.user = 'ursula';
    },
  });

  // schemas are typed as defineRoute types them, and the reply checked against the response schema
  notes.route({
    method: 'POST',
    path: '/',
    schema: {
      body: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
      response: { 201: { type: 'object', required: ['by', 'text'], properties: { by: { type: 'string' }, text: { type: 'string' } } } },
    },
    handler: (ctx) => {
      expectTypeOf(ctx.body).toEqualTypeOf<{ [x: string]: unknown; text: string }>();
      ctx.status(201);
      return { by: ctx.state.user.name, text: ctx.body.text };
    },
  });
  notes.route({
    method: 'GET',
    path: '/latest',
    schema: { response: { 200: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } } },
    // @ts-expect-error the reply is not what the response schema declares
    handler: (ctx) => ({ txt: ctx.state.user.name }),
  });

  // a nested group adds the state of its own hook (in its options) and middleware; a route's own middleware adds more
  const shared = notes.group('/shared', { onRequest: [loadTenant, untypedHook] }, audit);
  expectTypeOf(shared).toEqualTypeOf<TypedGroup<{ user: User } & ({ tenant: string } & { audit: string[] })>>();
  const stamp: Middleware<{ stamp: number }> = async (ctx, next) => {
    ctx.state.stamp = 42;
    await next();
  };
  shared.route({
    method: 'GET',
    path: '/:id',
    middlewares: [stamp],
    handler: (ctx) => {
      expectTypeOf(ctx.state.user).toEqualTypeOf<User>();
      expectTypeOf(ctx.state.tenant).toEqualTypeOf<string>();
      expectTypeOf(ctx.state.audit).toEqualTypeOf<string[]>();
      expectTypeOf(ctx.state.stamp).toEqualTypeOf<number>();
      expectTypeOf(ctx.state['undeclared']).toEqualTypeOf<unknown>();
      return { id: ctx.params.id, owner: ctx.state.user.name, tenant: ctx.state.tenant, audit: ctx.state.audit, stamp: ctx.state.stamp };
    },
  });
  shared.route({
    method: 'GET',
    path: '/',
    handler: (ctx) => {
      // @ts-expect-error only the route that lists `stamp` has it
      const stamped: number = ctx.state.stamp;
      return stamped;
    },
  });

  // an onRequest hook in the group's options alone types the group
  const tenants = app.group('/tenants', { onRequest: [loadTenant] });
  expectTypeOf(tenants).toEqualTypeOf<TypedGroup<{ tenant: string }>>();
  tenants.route({ method: 'GET', path: '/current', handler: (ctx) => ({ tenant: ctx.state.tenant }) });

  // options without hooks, and untyped middlewares, add nothing
  const plain = app.group('/plain', { security: [] }, timing);
  expectTypeOf(plain).toEqualTypeOf<TypedGroup<object>>();
  plain.route({
    method: 'GET',
    path: '/',
    handler: (ctx) => {
      expectTypeOf(ctx.state).toEqualTypeOf<RequestState>();
      return 'plain';
    },
  });

  // group.onRequest(hook) still adds a hook, but cannot change the group's type
  tenants.onRequest(loadTenant);
  notes.onRequest(untypedHook);

  // a controller's routes, typed by the group it receives, registered with registerController
  notes.registerController(new NotesController(notes));
}

class NotesController implements Controller {
  readonly #group: TypedGroup<{ user: User }>;
  constructor(group: TypedGroup<{ user: User }>) {
    this.#group = group;
  }
  routes(): Route[] {
    return [
      this.#group.defineRoute({
        method: 'GET',
        path: '/',
        handler: (ctx) => {
          expectTypeOf(ctx.state.user).toEqualTypeOf<User>();
          return [{ owner: ctx.state.user.id }];
        },
      }),
    ];
  }
}

// GroupOf names the group `app.group` returns for its arguments
expectTypeOf<GroupOf<[typeof requireUser]>>().toEqualTypeOf<TypedGroup<{ user: User }>>();
expectTypeOf<GroupOf<[{ onRequest: [typeof loadTenant] }, typeof timing]>>().toEqualTypeOf<TypedGroup<{ tenant: string }>>();
// a group with more state serves the routes written for less
expectTypeOf<TypedGroup<{ user: User } & { tenant: string }>>().toExtend<TypedGroup<{ user: User }>>();

// a route typed outside the group does not see its state
defineRoute({
  method: 'GET',
  path: '/elsewhere',
  handler: (ctx) => {
    // @ts-expect-error defineRoute alone knows nothing of a group's middlewares
    const name: string = ctx.state.user.name;
    return name;
  },
});

test('typed groups: the state their middlewares and hooks declare is there at run time', async (t: TestContext) => {
  const { app } = testApp();
  register(app);
  t.after(() => app.close());
  const as = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ url, headers: { authorization: 'Bearer ursula', ...headers } });

  t.assert.deepStrictEqual((await as('/notes/7')).json(), { note: '7', owner: 'ursula' });
  t.assert.strictEqual((await app.inject('/notes/7')).statusCode, 401, "the group's middleware guards group.route's routes");
  t.assert.deepStrictEqual((await as('/notes')).json(), [{ owner: 'u1' }], 'group.defineRoute, through registerController');
  const posted = await app.inject({ method: 'POST', url: '/notes', headers: { authorization: 'Bearer ursula' }, payload: { text: 'hi' } });
  t.assert.strictEqual(posted.statusCode, 201);
  t.assert.deepStrictEqual(posted.json(), { by: 'ursula', text: 'hi' });
  t.assert.deepStrictEqual((await as('/notes/shared/9', { 'x-tenant': 'globex' })).json(), {
    id: '9',
    owner: 'ursula',
    tenant: 'globex',
    audit: ['GET /notes/shared/9'],
    stamp: 42,
  });
  t.assert.deepStrictEqual((await app.inject('/tenants/current')).json(), { tenant: 'acme' }, 'the hook of the options ran');
  t.assert.strictEqual((await app.inject('/plain')).json(), 'plain');
});
