import { type TestContext, test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { App } from '../../../src/app/app.ts';
import type { RateLimitOptions } from '../../../src/app/core/rate-limit-policy.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, gate, testApp } from '../../helpers/app.ts';

const CREDENTIALS = {
  type: 'object',
  required: ['name', 'password'],
  properties: { name: { type: 'string', minLength: 1 }, password: { type: 'string' } },
} as const;

/** `POST /login` `{ name, password }`: 200 for the password `right`, else 401; limited by `limit`. */
function loginApp(limit: RateLimitOptions) {
  const { app, logs } = testApp({ logging: { level: 'error' } });
  app.registerController(
    controller({
      method: 'POST',
      path: '/login',
      schema: { body: CREDENTIALS },
      rateLimit: limit,
      handler: (ctx) => {
        if ((ctx.body as { password: string }).password !== 'right') throw KError.unauthorized('wrong password');
        return { ok: true };
      },
    }),
  );
  return { app, logs };
}

async function login(app: App, name: string, password: string): Promise<number> {
  const reply = await app.inject({ method: 'POST', url: '/login', payload: { name, password } });
  // the release of a request countIf does not count goes after its response
  await turn();
  return reply.statusCode;
}

const perAccount: RateLimitOptions = {
  max: 3,
  windowMs: 60_000,
  hook: 'preHandler',
  key: (ctx) => (ctx.body as { name: string }).name,
  countIf: (status) => status >= 400,
};

test('countIf: successful logins are taken back, failed ones count; the key reads the validated body', async (t: TestContext) => {
  const { app } = loginApp(perAccount);
  for (let i = 0; i < 10; i++) t.assert.equal(await login(app, 'ada', 'right'), 200, `success ${i} is not counted`);
  t.assert.deepStrictEqual([await login(app, 'ada', 'no'), await login(app, 'ada', 'no'), await login(app, 'ada', 'no')], [401, 401, 401]);
  t.assert.equal(await login(app, 'ada', 'right'), 429, 'locked: even the right password');
  t.assert.equal(await login(app, 'grace', 'right'), 200, 'another account');
  // a body that fails validation never reaches the limit (nor counts): a 400, however many
  for (let i = 0; i < 5; i++) {
    const bad = await app.inject({ method: 'POST', url: '/login', payload: { name: '' } });
    t.assert.equal(bad.statusCode, 400);
  }
});

test('requests running together are counted as they arrive: no more than max pass at once, whatever countIf says', async (t: TestContext) => {
  const { app } = testApp({ logging: { level: 'error' } });
  const held = gate<unknown>();
  app.registerController(
    controller({
      method: 'GET',
      path: '/slow',
      rateLimit: { max: 3, windowMs: 60_000, countIf: () => false },
      handler: () => held.promise,
    }),
  );
  const replies = Array.from({ length: 6 }, () => app.inject('/slow'));
  // the three beyond the limit are refused while the first three are still running
  const refused = await Promise.race([Promise.all(replies.slice(3)), Promise.all(replies.slice(0, 3))]);
  t.assert.deepStrictEqual(
    refused.map((r) => r.statusCode),
    [429, 429, 429],
  );
  held.resolve({ ok: true });
  t.assert.deepStrictEqual(
    (await Promise.all(replies.slice(0, 3))).map((r) => r.statusCode),
    [200, 200, 200],
  );
  await turn();
  t.assert.equal((await app.inject('/slow')).statusCode, 200, 'each was taken back once answered: the window is empty again');
});

test('without hook: preHandler the limit is checked before the body: its key sees no body yet', async (t: TestContext) => {
  const seen: unknown[] = [];
  const key = (ctx: { body: unknown }) => {
    seen.push(ctx.body);
    return 'all';
  };
  const { app } = loginApp({ max: 3, windowMs: 60_000, key });
  await login(app, 'ada', 'right');
  t.assert.deepStrictEqual(seen, [undefined]);
});

test('a countIf that throws leaves the request counted, and the error is logged', async (t: TestContext) => {
  const { app, logs } = loginApp({
    max: 2,
    windowMs: 60_000,
    countIf: () => {
      throw new Error('boom');
    },
  });
  t.assert.deepStrictEqual(
    [await login(app, 'a', 'right'), await login(app, 'a', 'right'), await login(app, 'a', 'right')],
    [200, 200, 429],
  );
  t.assert.ok(logs.lines.some((l) => l['msg'] === 'rateLimit.countIf threw: the request stays counted'));
});

test('bad countIf and hook options are refused at registration, naming the route', (t: TestContext) => {
  const app = new App({ logging: { level: 'silent' } });
  const register = (rateLimit: unknown) =>
    app.registerController(
      controller({ method: 'GET', path: `/x${Math.random()}`, rateLimit: rateLimit as RateLimitOptions, handler: () => 1 }),
    );
  t.assert.throws(() => register({ max: 1, windowMs: 1, countIf: 'yes' }), /rateLimit\.countIf must be a function of \(status, ctx\)/);
  t.assert.throws(() => register({ max: 1, windowMs: 1, hook: 'onSend' }), /rateLimit\.hook must be 'onRequest' or 'preHandler'/);
});
