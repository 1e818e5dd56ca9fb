import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { MemorySessionStore } from '../../../src/coordination/memory-session-store.ts';
import type { SessionStore } from '../../../src/coordination/session-store.ts';
import { controller, testApp } from '../../helpers/app.ts';

const SECRET = 'a-session-secret-of-at-least-32-chars';

/** An App with routes that read and change the session, on the given store. */
function sessionApp(config: KConfig = {}, store: SessionStore = new MemorySessionStore()) {
  const { app, logs } = testApp({ logging: { level: 'silent' }, cookies: { secrets: [SECRET] }, ...config }, { sessionStore: store });
  const session = (ctx: Ctx) => ctx.session();
  app.registerController(
    controller(
      { method: 'GET', path: '/whoami', handler: async (ctx) => ({ user: (await session(ctx)).get('user') ?? null }) },
      {
        method: 'POST',
        path: '/login/:user',
        handler: async (ctx) => {
          const s = await session(ctx);
          s.regenerate();
          s.set('user', (ctx.params as { user: string }).user);
          return { id: s.id };
        },
      },
      {
        method: 'POST',
        path: '/logout',
        handler: async (ctx) => {
          (await session(ctx)).destroy();
          return null;
        },
      },
      {
        method: 'POST',
        path: '/fail',
        handler: async (ctx) => {
          (await session(ctx)).set('user', 'mallory');
          throw new Error('the handler failed after the change');
        },
      },
      {
        method: 'POST',
        path: '/big',
        handler: async (ctx) => {
          (await session(ctx)).set('blob', 'x'.repeat(20_000));
          return null;
        },
      },
      {
        method: 'GET',
        path: '/twice',
        handler: async (ctx) => {
          const first = await ctx.session();
          return first === (await ctx.session());
        },
      },
      { method: 'GET', path: '/plain', handler: () => 'no session asked for' },
    ),
  );
  return { app, logs, store };
}

/** The `name=value` of a response's session cookie, and its attributes. */
function sessionCookie(headers: Record<string, unknown>): { pair: string; attributes: string } | undefined {
  const all = headers['set-cookie'];
  const line = (Array.isArray(all) ? all : all === undefined ? [] : [String(all)]).find((c: string) => c.startsWith('sid='));
  if (line === undefined) return undefined;
  const [pair = '', ...rest] = line.split('; ');
  return { pair, attributes: rest.join('; ') };
}

describe('ctx.session()', () => {
  test('a request that never asks for its session gets no cookie, and one that only reads gets none either', async (t: TestContext) => {
    const { app } = sessionApp();
    t.assert.equal(sessionCookie((await app.inject('/plain')).headers), undefined);
    const read = await app.inject('/whoami');
    t.assert.deepStrictEqual(read.json(), { user: null });
    t.assert.equal(sessionCookie(read.headers), undefined, 'an empty session is not saved');
  });

  test('a login sets a signed, HttpOnly, SameSite=Lax cookie with Max-Age; the next request reads the session', async (t: TestContext) => {
    const { app } = sessionApp({ sessions: { ttlMs: 3_600_000 } });
    const login = await app.inject({ method: 'POST', url: '/login/ada' });
    t.assert.equal(login.statusCode, 200);
    const cookie = sessionCookie(login.headers);
    t.assert.ok(cookie !== undefined);
    t.assert.match(cookie.pair, /^sid=[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}$/);
    t.assert.equal(cookie.pair.slice(4, 36), login.json().id);
    t.assert.match(cookie.attributes, /Max-Age=3600/);
    t.assert.match(cookie.attributes, /HttpOnly/);
    t.assert.match(cookie.attributes, /SameSite=Lax/);
    t.assert.match(cookie.attributes, /Path=\//);
    t.assert.doesNotMatch(cookie.attributes, /Secure/, 'plain HTTP in development');
    const again = await app.inject({ url: '/whoami', headers: { cookie: cookie.pair } });
    t.assert.deepStrictEqual(again.json(), { user: 'ada' });
    t.assert.equal(sessionCookie(again.headers), undefined, 'an unchanged session is not sent again before a tenth of its ttl passed');
  });

  test('regenerate() gives a new id with the same data, and the old id stops working', async (t: TestContext) => {
    const { app, store } = sessionApp();
    const first = sessionCookie((await app.inject({ method: 'POST', url: '/login/ada' })).headers)?.pair ?? '';
    const second = await app.inject({ method: 'POST', url: '/login/grace', headers: { cookie: first } });
    const renewed = sessionCookie(second.headers)?.pair ?? '';
    t.assert.notEqual(renewed, first);
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie: renewed } })).json(), { user: 'grace' });
    const old = await app.inject({ url: '/whoami', headers: { cookie: first } });
    t.assert.deepStrictEqual(old.json(), { user: null }, 'the replaced id is gone from the store');
    t.assert.match(sessionCookie(old.headers)?.attributes ?? '', /Expires=Thu, 01 Jan 1970/, 'its stale cookie is cleared');
    t.assert.equal((store as MemorySessionStore).size, 1);
  });

  test('destroy() empties the session, removes it from the store and clears the cookie', async (t: TestContext) => {
    const { app, store } = sessionApp();
    const cookie = sessionCookie((await app.inject({ method: 'POST', url: '/login/ada' })).headers)?.pair ?? '';
    const logout = await app.inject({ method: 'POST', url: '/logout', headers: { cookie } });
    t.assert.equal(sessionCookie(logout.headers)?.pair, 'sid=');
    t.assert.match(sessionCookie(logout.headers)?.attributes ?? '', /Expires=Thu, 01 Jan 1970/);
    t.assert.equal((store as MemorySessionStore).size, 0);
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: null });
  });

  test('a forged, tampered or unsigned cookie is a new empty session, never a lookup of the given id', async (t: TestContext) => {
    const gets: string[] = [];
    const memory = new MemorySessionStore();
    const spy: SessionStore = {
      ...bind(memory),
      get: (id) => {
        gets.push(id);
        return memory.get(id);
      },
    };
    const { app } = sessionApp({}, spy);
    const real = sessionCookie((await app.inject({ method: 'POST', url: '/login/ada' })).headers)?.pair ?? '';
    const id = real.slice(4, 36);
    for (const forged of [`sid=${id}`, `sid=${id}.AAAA`, `sid=${'a'.repeat(32)}.${real.slice(37)}`, 'sid=', 'sid=..']) {
      const response = await app.inject({ url: '/whoami', headers: { cookie: forged } });
      t.assert.deepStrictEqual(response.json(), { user: null }, forged);
      t.assert.equal(response.statusCode, 200);
    }
    t.assert.deepStrictEqual(gets, [], 'the store was never asked');
  });

  test('a failed request saves none of its changes', async (t: TestContext) => {
    const { app } = sessionApp();
    const cookie = sessionCookie((await app.inject({ method: 'POST', url: '/login/ada' })).headers)?.pair ?? '';
    const failed = await app.inject({ method: 'POST', url: '/fail', headers: { cookie } });
    t.assert.equal(failed.statusCode, 500);
    t.assert.equal(sessionCookie(failed.headers), undefined);
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: 'ada' });
  });

  test('a session larger than sessions.maxBytes is not saved: the request fails with the size in the log', async (t: TestContext) => {
    const { app, logs } = sessionApp({ sessions: { maxBytes: 1_024 }, logging: { level: 'error' } });
    const response = await app.inject({ method: 'POST', url: '/big' });
    t.assert.equal(response.statusCode, 500);
    t.assert.equal(sessionCookie(response.headers), undefined);
    t.assert.ok(logs.lines.some((l) => /more than sessions\.maxBytes \(1024\)/.test(JSON.stringify(l))));
  });

  test('rolling expiry: once a tenth of the ttl has passed, a read extends the session and sends the cookie again', async (t: TestContext) => {
    const { app } = sessionApp({ sessions: { ttlMs: 1_000 } });
    const cookie = sessionCookie((await app.inject({ method: 'POST', url: '/login/ada' })).headers)?.pair ?? '';
    await sleep(150);
    const touched = await app.inject({ url: '/whoami', headers: { cookie } });
    t.assert.equal(sessionCookie(touched.headers)?.pair, cookie, 'the same id');
    t.assert.match(sessionCookie(touched.headers)?.attributes ?? '', /Max-Age=1/);
    // kept alive by requests 600 ms apart, beyond the first ttl
    for (let i = 0; i < 3; i++) {
      await sleep(600);
      t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: 'ada' });
    }
    await sleep(1_100);
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: null }, 'expired when left alone');
  });

  test('a store that cannot be reached answers 503 SESSION_STORE_UNAVAILABLE, never an empty session', async (t: TestContext) => {
    const down = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    const memory = new MemorySessionStore();
    let broken = false;
    const flaky: SessionStore = {
      get: (id) => (broken ? Promise.reject(down) : memory.get(id)),
      set: (id, data, ttlMs) => (broken ? Promise.reject(down) : memory.set(id, data, ttlMs)),
      delete: (id) => (broken ? Promise.reject(down) : memory.delete(id)),
      close: () => memory.close(),
    };
    const { app } = sessionApp({ env: 'production' }, flaky);
    const cookie = sessionCookie((await app.inject({ method: 'POST', url: '/login/ada' })).headers)?.pair ?? '';
    broken = true;
    for (const request of [
      { url: '/whoami', headers: { cookie } },
      { method: 'POST' as const, url: '/login/grace' },
    ]) {
      const response = await app.inject(request);
      t.assert.equal(response.statusCode, 503, request.url);
      t.assert.equal(response.json().code, 'SESSION_STORE_UNAVAILABLE');
      t.assert.equal(response.headers['retry-after'], '1');
      t.assert.doesNotMatch(response.body, /ECONNREFUSED/, 'no internal detail in production');
      t.assert.equal(sessionCookie(response.headers), undefined);
    }
    broken = false;
    t.assert.deepStrictEqual((await app.inject({ url: '/whoami', headers: { cookie } })).json(), { user: 'ada' });
  });

  test('Secure outside development, and in development behind a trusted proxy that says https', async (t: TestContext) => {
    const production = sessionApp({ env: 'production' }).app;
    t.assert.match(sessionCookie((await production.inject({ method: 'POST', url: '/login/ada' })).headers)?.attributes ?? '', /Secure/);
    const proxied = sessionApp({ trustProxy: 1 }).app;
    const https = await proxied.inject({ method: 'POST', url: '/login/ada', headers: { 'x-forwarded-proto': 'https' } });
    t.assert.match(sessionCookie(https.headers)?.attributes ?? '', /Secure/);
    const untrusted = sessionApp().app;
    const ignored = await untrusted.inject({ method: 'POST', url: '/login/ada', headers: { 'x-forwarded-proto': 'https' } });
    t.assert.doesNotMatch(sessionCookie(ignored.headers)?.attributes ?? '', /Secure/, 'an untrusted peer says nothing');
  });

  test('the cookie name is sessions.cookieName; ctx.session() is the same object on every call', async (t: TestContext) => {
    const { app } = sessionApp({ sessions: { cookieName: 'books.sid' } });
    const login = await app.inject({ method: 'POST', url: '/login/ada' });
    t.assert.match(String(login.headers['set-cookie']), /^books\.sid=/);
    t.assert.equal((await app.inject('/twice')).json(), true);
  });

  test('without cookies.secrets, ctx.session() fails with a message naming the key', async (t: TestContext) => {
    const { app, logs } = testApp({ logging: { level: 'error' } });
    app.registerController(controller({ method: 'GET', path: '/s', handler: async (ctx) => (await ctx.session()).id }));
    t.assert.equal((await app.inject('/s')).statusCode, 500);
    t.assert.ok(logs.lines.some((l) => JSON.stringify(l).includes('cookies.secrets')));
  });
});

/** The store's methods bound to it, to spread into a spy. */
function bind(store: MemorySessionStore): SessionStore {
  return {
    get: (id) => store.get(id),
    set: (id, data, ttlMs) => store.set(id, data, ttlMs),
    delete: (id) => store.delete(id),
    close: () => store.close(),
  };
}
