import { describe, type TestContext, test } from 'node:test';
import session from 'express-session';
import type { App } from '../../../src/app/app.ts';
import type { ExpressSessionStore } from '../../../src/app/sessions/express-store.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { MemorySessionStore } from '../../../src/coordination/memory-session-store.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';

const SECRET = 'an-express-store-secret-of-32-chars-or-more';
const TTL_MS = 60_000;

/** An App whose routes log in, read and log out, with the store given to `setSessionStore`. */
function storeApp(store: unknown, config: KConfig = {}): App {
  const { app } = testApp({ logging: { level: 'silent' }, cookies: { secrets: [SECRET] }, sessions: { ttlMs: TTL_MS }, ...config });
  app.setSessionStore(store as ExpressSessionStore);
  app.registerController(
    controller(
      {
        method: 'POST',
        path: '/login/:user',
        handler: async (ctx) => {
          const s = await ctx.session();
          s.regenerate();
          s.set('user', (ctx.params as { user: string }).user);
          return { id: s.id };
        },
      },
      { method: 'GET', path: '/whoami', handler: async (ctx) => ({ user: (await ctx.session()).get('user') ?? null }) },
      { method: 'POST', path: '/logout', handler: async (ctx) => void (await ctx.session()).destroy() },
    ),
  );
  return app;
}

/** The `sid=…` pair a response set. */
function cookieOf(res: { headers: Record<string, unknown> }): string {
  return String(res.headers['set-cookie']).split(';')[0] ?? '';
}

/** The stores's sessions as express-session's MemoryStore keeps them (JSON, by id). */
function held(store: session.MemoryStore): Record<string, { cookie: Record<string, unknown>; data: Record<string, unknown> }> {
  const sessions = (store as unknown as { sessions: Record<string, string> }).sessions;
  return Object.fromEntries(Object.entries(sessions).map(([id, json]) => [id, JSON.parse(json)]));
}

describe('app.setSessionStore with an express-session store', () => {
  test("express-session's MemoryStore: a login is kept as { cookie, data }, expiring sessions.ttlMs from the save, read back, and destroyed", async (t: TestContext) => {
    const store = new session.MemoryStore();
    const app = storeApp(store);
    const before = Date.now();
    const login = await app.inject({ method: 'POST', url: '/login/ada' });
    t.assert.strictEqual(login.statusCode, 200, login.body);
    const { id } = login.json<{ id: string }>();
    const kept = held(store)[id];
    t.assert.ok(kept !== undefined, 'the store holds the session under its id');
    t.assert.deepStrictEqual(kept.data, { user: 'ada' });
    t.assert.strictEqual(kept.cookie['originalMaxAge'], TTL_MS);
    const expires = Date.parse(String(kept.cookie['expires']));
    t.assert.ok(expires >= before + TTL_MS && expires <= Date.now() + TTL_MS, `expires ${kept.cookie['expires']}`);

    const cookie = cookieOf(login);
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: 'ada' });
    await app.inject({ method: 'POST', url: '/logout', headers: { cookie } });
    t.assert.deepStrictEqual(held(store), {}, 'destroy() removed it from the store');
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: null });
  });

  test('a session read once a tenth of the ttl has passed is extended with the store’s touch, not rewritten', async (t: TestContext) => {
    const calls: string[] = [];
    let touched: { cookie: { expires: Date } } | undefined;
    const stored = { cookie: { expires: new Date(Date.now() + TTL_MS / 2).toISOString() }, data: { user: 'ada' } };
    const store = {
      get: (_sid: string, done: (e: null, s: unknown) => void) => done(null, stored),
      set: (_sid: string, _s: unknown, done: (e: null) => void) => {
        calls.push('set');
        done(null);
      },
      destroy: (_sid: string, done: (e: null) => void) => done(null),
      touch: (_sid: string, s: { cookie: { expires: Date } }, done: (e: null) => void) => {
        calls.push('touch');
        touched = s;
        done(null);
      },
    };
    const app = storeApp(store);
    const login = await app.inject({ method: 'POST', url: '/login/ada' });
    calls.length = 0;
    const before = Date.now();
    const read = await app.inject({ url: '/whoami', headers: { cookie: cookieOf(login) } });
    t.assert.deepStrictEqual(read.json(), { user: 'ada' });
    t.assert.deepStrictEqual(calls, ['touch']);
    t.assert.ok((touched?.cookie.expires.getTime() ?? 0) >= before + TTL_MS, 'the new expiry is a whole ttl away');
    t.assert.match(String(read.headers['set-cookie']), /Max-Age=60/, 'and the cookie is sent again');
  });

  test('a session whose cookie.expires has passed reads as none, and its cookie is cleared', async (t: TestContext) => {
    const expired = { cookie: { expires: new Date(Date.now() - 1).toISOString() }, data: { user: 'ada' } };
    const store = { get: (_sid: string, done: (e: null, s: unknown) => void) => done(null, expired), set: () => {}, destroy: () => {} };
    const app = storeApp(store);
    const cookie = cookieOf(await storeApp(new session.MemoryStore()).inject({ method: 'POST', url: '/login/ada' }));
    const read = await app.inject({ url: '/whoami', headers: { cookie } });
    t.assert.deepStrictEqual(read.json(), { user: null });
    t.assert.match(String(read.headers['set-cookie']), /^sid=;/);
  });

  test('a store that calls back with an error, throws, or does not call back within coordination.timeoutMs: 503 SESSION_STORE_UNAVAILABLE', async (t: TestContext) => {
    const cookie = cookieOf(await storeApp(new session.MemoryStore()).inject({ method: 'POST', url: '/login/ada' }));
    const failing = {
      'calls back with an error': (_sid: string, done: (e: Error) => void) => done(new Error('ECONNREFUSED')),
      throws: () => {
        throw new Error('the client is closed');
      },
      'never calls back': () => {},
      'rejects the promise it returns': () => Promise.reject(new Error('down')),
    };
    for (const [what, get] of Object.entries(failing)) {
      const app = storeApp({ get, set: () => {}, destroy: () => {} }, { coordination: { timeoutMs: 50 } });
      const res = await app.inject({ url: '/whoami', headers: { cookie } });
      t.assert.strictEqual(res.statusCode, 503, `${what}: ${res.body}`);
      t.assert.strictEqual(res.json<{ code: string }>().code, 'SESSION_STORE_UNAVAILABLE', what);
      t.assert.strictEqual(res.headers['retry-after'], '1', what);
    }
  });

  test("flotilla's own SessionStore is taken as it is, and closed with the App; an express store's close() too", async (t: TestContext) => {
    const own = new MemorySessionStore();
    let closed = 0;
    own.close = async () => void closed++;
    const a = storeApp(own);
    t.assert.strictEqual((await a.inject({ method: 'POST', url: '/login/ada' })).statusCode, 200);
    await a.close();
    const express = Object.assign(new session.MemoryStore(), { close: () => void closed++ });
    const b = storeApp(express);
    t.assert.strictEqual((await b.inject({ method: 'POST', url: '/login/ada' })).statusCode, 200);
    await b.close();
    t.assert.strictEqual(closed, 2);
  });
});

describe('app.setSessionStore is refused', () => {
  const store = () => new session.MemoryStore();
  const quiet = () => testApp({ logging: { level: 'silent' }, cookies: { secrets: [SECRET] } }).app;

  test('a second time: FLO_ERR_SESSION_STORE_FIXED', (t: TestContext) => {
    const app = quiet();
    app.setSessionStore(store());
    t.assert.throws(() => app.setSessionStore(store()), { code: 'FLO_ERR_SESSION_STORE_FIXED', message: /already set: one per App/ });
  });

  test('once the App listens: FLO_ERR_SESSION_STORE_FIXED naming its state', async (t: TestContext) => {
    const app = quiet();
    await serve(t, app);
    t.assert.throws(() => app.setSessionStore(store()), { code: 'FLO_ERR_SESSION_STORE_FIXED', message: /the App is listening/ });
  });

  test('once a request has used the store: FLO_ERR_SESSION_STORE_FIXED', async (t: TestContext) => {
    const app = quiet();
    app.registerController(controller({ method: 'POST', path: '/x', handler: async (ctx) => void (await ctx.session()).set('a', 1) }));
    await app.inject({ method: 'POST', url: '/x' });
    t.assert.throws(() => app.setSessionStore(store()), { code: 'FLO_ERR_SESSION_STORE_FIXED', message: /before the first request/ });
  });

  test('something that is not a store: FLO_ERR_BAD_SESSION_STORE naming what it has', (t: TestContext) => {
    const app = quiet();
    t.assert.throws(() => app.setSessionStore({ get() {}, set() {} } as never), {
      code: 'FLO_ERR_BAD_SESSION_STORE',
      message: /got an object with get, set$/,
    });
    t.assert.throws(() => app.setSessionStore(undefined as never), { code: 'FLO_ERR_BAD_SESSION_STORE', message: /got undefined$/ });
  });
});
