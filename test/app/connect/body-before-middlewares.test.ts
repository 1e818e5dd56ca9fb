import { type TestContext, test } from 'node:test';
import { Passport } from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { fromConnect } from '../../../src/app/connect/from-connect.ts';
import type { Middleware, Route } from '../../../src/app/core/route.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';

const CREDENTIALS = {
  type: 'object',
  required: ['username', 'password'],
  properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string', minLength: 1 } },
} as const;

/** passport-local over one user, through fromConnect: it reads `req.body.username` and `req.body.password`. */
function localAuth(): Middleware[] {
  const passport = new Passport();
  passport.use(
    new LocalStrategy((username, password, done) => done(null, username === 'ada' && password === 'lovelace' ? { name: username } : false)),
  );
  return [fromConnect(passport.initialize()), fromConnect(passport.authenticate('local', { session: false }))];
}

const login = (extra: Partial<Route> = {}): Route => ({
  method: 'POST',
  path: '/login',
  body: 'form',
  schema: { body: CREDENTIALS },
  middlewares: localAuth(),
  handler: (ctx) => ({ user: (ctx.req as { user?: { name: string } }).user?.name }),
  ...extra,
});

const form = (body: string) => ({
  method: 'POST' as const,
  url: '/login',
  payload: body,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

test('passport-local logs in through fromConnect: the body is read before a connect middleware by default', async (t: TestContext) => {
  const { app } = testApp({ logging: { level: 'silent' } });
  app.registerController(controller(login()));
  const ok = await app.inject(form('username=ada&password=lovelace'));
  t.assert.equal(ok.statusCode, 200);
  t.assert.deepStrictEqual(ok.json(), { user: 'ada' });
  const wrong = await app.inject(form('username=ada&password=babbage'));
  t.assert.equal(wrong.statusCode, 401, "passport's own answer to wrong credentials");
  // the body is validated before passport sees it: a precise 400 problem, not passport's bare one
  const missing = await app.inject(form('username=ada'));
  t.assert.equal(missing.statusCode, 400);
  t.assert.equal(missing.headers['content-type'], 'application/problem+json');
  t.assert.equal(missing.json().code, 'VALIDATION_FAILED');
});

test('a group of connect middlewares reads its routes’ bodies first too, over a real socket with JSON', async (t: TestContext) => {
  const { app } = testApp({ logging: { level: 'silent' } });
  const group = app.group('/auth', ...localAuth());
  group.registerController(controller({ ...login(), middlewares: [], body: 'json' }));
  const port = await serve(t, app);
  const response = await fetch(`http://127.0.0.1:${port}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ada', password: 'lovelace' }),
  });
  t.assert.equal(response.status, 200);
  t.assert.deepStrictEqual(await response.json(), { user: 'ada' });
});

test('bodyBeforeMiddlewares: false under a connect middleware that reads req.body: a warning naming the option, once', async (t: TestContext) => {
  const { app, logs } = testApp({ logging: { level: 'warn' } });
  app.registerController(controller(login({ bodyBeforeMiddlewares: false, schema: {} })));
  for (let i = 0; i < 3; i++) {
    const refused = await app.inject(form('username=ada&password=lovelace'));
    t.assert.equal(refused.statusCode, 400, 'passport saw no credentials');
  }
  const warnings = logs.lines.filter((l) => String(l['msg']).includes('set bodyBeforeMiddlewares: true on the route'));
  t.assert.equal(warnings.length, 1);
  t.assert.equal(warnings[0]?.['route'], 'POST /login');
});

test('a flotilla middleware sees ctx.body with bodyBeforeMiddlewares: true, and not by default', async (t: TestContext) => {
  const { app } = testApp({ logging: { level: 'silent' } });
  const seen: unknown[] = [];
  const spy: Middleware = async (ctx, next) => {
    seen.push(ctx.body);
    await next();
  };
  app.registerController(
    controller(
      { method: 'POST', path: '/early', bodyBeforeMiddlewares: true, middlewares: [spy], handler: () => 'ok' },
      { method: 'POST', path: '/late', middlewares: [spy], handler: () => 'ok' },
    ),
  );
  await app.inject({ method: 'POST', url: '/early', payload: { a: 1 } });
  await app.inject({ method: 'POST', url: '/late', payload: { a: 1 } });
  t.assert.deepStrictEqual(seen, [{ a: 1 }, undefined]);
});

test('bodyBeforeMiddlewares on a GET route, or not a boolean, is refused at registration', (t: TestContext) => {
  const { app } = testApp({ logging: { level: 'silent' } });
  t.assert.throws(
    () => app.registerController(controller({ method: 'GET', path: '/g', bodyBeforeMiddlewares: true, handler: () => 1 })),
    /bodyBeforeMiddlewares applies to a route with a body/,
  );
  t.assert.throws(
    () => app.registerController(controller({ method: 'POST', path: '/p', bodyBeforeMiddlewares: 'yes' as never, handler: () => 1 })),
    /bodyBeforeMiddlewares must be a boolean/,
  );
});
