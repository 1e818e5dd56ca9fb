import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import type { App } from '../../../src/app/app.ts';
import { CookieSigner } from '../../../src/app/cookies/cookie-signer.ts';
import type { CookieOptions } from '../../../src/app/cookies/cookies.ts';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';
const OLD_SECRET = 'the-secret-before-the-last-rotation-x';

/** An App whose one route runs `handler`, with `cookies.secrets` when given. */
function cookieApp(handler: (ctx: Ctx) => unknown, config: KConfig = { cookies: { secrets: [SECRET] } }): App {
  const { app } = testApp(config);
  app.registerController(controller({ method: 'GET', path: '/', handler }, { method: 'GET', path: '/other', handler: () => 'ok' }));
  return app;
}

async function setCookies(set: (ctx: Ctx) => void, config?: KConfig): Promise<string[]> {
  const app = cookieApp((ctx) => {
    set(ctx);
    return 'ok';
  }, config);
  const res = await app.inject('/');
  await app.close();
  assert.equal(res.statusCode, 200, res.body);
  const header = res.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

async function setOne(options: CookieOptions): Promise<string> {
  const [header] = await setCookies((ctx) => ctx.cookies.set('c', 'v', options));
  return header!;
}

describe('ctx.cookies.get', () => {
  test('reads the request cookies, percent-decoded; undefined when absent', async () => {
    const seen: unknown[] = [];
    const app = cookieApp((ctx) => {
      seen.push(ctx.cookies.get('theme'), ctx.cookies.get('name'), ctx.cookies.get('missing'));
      return 'ok';
    });
    await app.inject({ url: '/', headers: { cookie: 'theme=dark; name=J%C3%BCrgen%20M' } });
    await app.inject('/');
    assert.deepEqual(seen, ['dark', 'Jürgen M', undefined, undefined, undefined, undefined]);
    await app.close();
  });

  test('malformed headers do not fail the request', async () => {
    const seen: unknown[] = [];
    const app = cookieApp((ctx) => {
      seen.push(ctx.cookies.get('a'), ctx.cookies.get('b'));
      return 'ok';
    });
    for (const cookie of ['a=%E0%A4%A; b', ';;;=;', 'a', '=x; a="quoted"', 'a=1; a=2']) {
      const res = await app.inject({ url: '/', headers: { cookie } });
      assert.equal(res.statusCode, 200, cookie);
    }
    // a value that does not percent-decode is kept as sent, a quoted one too; the first of two wins
    assert.deepEqual(seen, ['%E0%A4%A', undefined, undefined, undefined, undefined, undefined, '"quoted"', undefined, '1', undefined]);
    await app.close();
  });

  test('signed: the value when a configured secret signed it, undefined when unsigned, tampered or malformed', async () => {
    const signed = new CookieSigner([SECRET]).sign('user-7');
    const byOld = new CookieSigner([OLD_SECRET]).sign('user-6');
    const read = async (cookie: string, secrets = [SECRET]) => {
      let value: unknown = 'not read';
      const app = cookieApp(
        (ctx) => {
          value = ctx.cookies.get('session', { signed: true });
          return 'ok';
        },
        { cookies: { secrets } },
      );
      await app.inject({ url: '/', headers: { cookie } });
      await app.close();
      return value;
    };
    assert.equal(await read(`session=${encodeURIComponent(signed)}`), 'user-7');
    assert.equal(await read(`session=${signed}`), 'user-7');
    assert.equal(await read('session=user-7'), undefined);
    assert.equal(await read(`session=${signed.replace('user-7', 'user-1')}`), undefined);
    assert.equal(await read(`session=${signed.slice(0, -1)}`), undefined);
    assert.equal(await read(`session=${signed}x`), undefined);
    assert.equal(await read('other=1'), undefined);
    // rotation: the old secret still verifies while it is listed after the new one
    assert.equal(await read(`session=${byOld}`), undefined);
    assert.equal(await read(`session=${byOld}`, [SECRET, OLD_SECRET]), 'user-6');
  });

  test('without signed, a signed cookie reads as sent, signature included', async () => {
    let value: unknown;
    const signed = new CookieSigner([SECRET]).sign('user-7');
    const app = cookieApp((ctx) => {
      value = ctx.cookies.get('session');
      return 'ok';
    });
    await app.inject({ url: '/', headers: { cookie: `session=${signed}` } });
    await app.close();
    assert.equal(value, signed);
  });

  test('the Cookie header is parsed on the first read only, and never when no one reads it', async () => {
    const { app } = testApp();
    let parsedBefore: unknown;
    app.registerController(
      controller({
        method: 'GET',
        path: '/',
        handler: (ctx) => {
          // a getter on the request's headers counts the reads of `cookie`
          let reads = 0;
          const headers = ctx.req.headers;
          const value = headers.cookie;
          Object.defineProperty(headers, 'cookie', {
            get: () => {
              reads++;
              return value;
            },
          });
          parsedBefore = reads;
          ctx.cookies.get('a');
          ctx.cookies.get('b');
          ctx.cookies.get('a');
          return { reads };
        },
      }),
    );
    const res = await app.inject({ url: '/', headers: { cookie: 'a=1; b=2' } });
    assert.equal(parsedBefore, 0);
    assert.deepEqual(res.json(), { reads: 1 });
    await app.close();
  });
});

describe('ctx.cookies.set', () => {
  test('defaults: path /, HttpOnly, SameSite=Lax', async () => {
    assert.equal(await setOne({}), 'c=v; Path=/; HttpOnly; SameSite=Lax');
  });

  test('every option', async () => {
    const expires = new Date('2030-01-02T03:04:05Z');
    assert.equal(await setOne({ maxAge: 3600 }), 'c=v; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax');
    assert.equal(await setOne({ maxAge: 0 }), 'c=v; Max-Age=0; Path=/; HttpOnly; SameSite=Lax');
    assert.equal(await setOne({ expires }), 'c=v; Path=/; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; SameSite=Lax');
    assert.equal(await setOne({ path: '/admin' }), 'c=v; Path=/admin; HttpOnly; SameSite=Lax');
    assert.equal(await setOne({ domain: 'example.com' }), 'c=v; Domain=example.com; Path=/; HttpOnly; SameSite=Lax');
    assert.equal(await setOne({ secure: true }), 'c=v; Path=/; HttpOnly; Secure; SameSite=Lax');
    assert.equal(await setOne({ httpOnly: false }), 'c=v; Path=/; SameSite=Lax');
    assert.equal(await setOne({ sameSite: 'strict' }), 'c=v; Path=/; HttpOnly; SameSite=Strict');
    assert.equal(await setOne({ sameSite: true }), 'c=v; Path=/; HttpOnly; SameSite=Strict');
    assert.equal(await setOne({ sameSite: false }), 'c=v; Path=/; HttpOnly');
    assert.equal(await setOne({ sameSite: 'none', secure: true }), 'c=v; Path=/; HttpOnly; Secure; SameSite=None');
    assert.equal(await setOne({ partitioned: true, secure: true }), 'c=v; Path=/; HttpOnly; Secure; Partitioned; SameSite=Lax');
    assert.equal(await setOne({ priority: 'high' }), 'c=v; Path=/; HttpOnly; Priority=High; SameSite=Lax');
    const signed = await setOne({ signed: true });
    assert.equal(signed, `c=${new CookieSigner([SECRET]).sign('v')}; Path=/; HttpOnly; SameSite=Lax`);
  });

  test('a value is percent-encoded as needed and reads back the same', async () => {
    const [header] = await setCookies((ctx) => ctx.cookies.set('name', 'Jürgen; x=1', {}));
    assert.equal(header, 'name=J%C3%BCrgen%3B%20x%3D1; Path=/; HttpOnly; SameSite=Lax');
    let read: unknown;
    const app = cookieApp((ctx) => {
      read = ctx.cookies.get('name');
      return 'ok';
    });
    await app.inject({ url: '/', headers: { cookie: header!.split(';')[0]! } });
    await app.close();
    assert.equal(read, 'Jürgen; x=1');
  });

  test('a signed cookie set reads back with signed: true, under rotation too', async () => {
    const [header] = await setCookies((ctx) => ctx.cookies.set('session', 'user-7', { signed: true }), {
      cookies: { secrets: [OLD_SECRET] },
    });
    let read: unknown;
    const app = cookieApp(
      (ctx) => {
        read = ctx.cookies.get('session', { signed: true });
        return 'ok';
      },
      { cookies: { secrets: [SECRET, OLD_SECRET] } },
    );
    await app.inject({ url: '/', headers: { cookie: header!.split(';')[0]! } });
    await app.close();
    assert.equal(read, 'user-7');
  });

  test('several cookies are several Set-Cookie headers; setting one again replaces it', async () => {
    const headers = await setCookies((ctx) => {
      ctx.setHeader('Set-Cookie', 'legacy=1');
      ctx.cookies.set('a', '1');
      ctx.cookies.set('b', '2', { path: '/b' });
      ctx.cookies.set('a', '3');
      ctx.cookies.set('b', '4', { path: '/other' });
    });
    assert.deepEqual(headers, [
      'legacy=1',
      'a=3; Path=/; HttpOnly; SameSite=Lax',
      'b=2; Path=/b; HttpOnly; SameSite=Lax',
      'b=4; Path=/other; HttpOnly; SameSite=Lax',
    ]);
  });

  test('clear expires the cookie on its path and domain', async () => {
    const headers = await setCookies((ctx) => {
      ctx.cookies.clear('theme');
      ctx.cookies.clear('session', { path: '/app', domain: 'example.com' });
    });
    assert.deepEqual(headers, [
      'theme=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
      'session=; Domain=example.com; Path=/app; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    ]);
  });

  test('sameSite none and partitioned without secure are refused', async () => {
    for (const options of [{ sameSite: 'none' }, { partitioned: true }] as const) {
      let caught: unknown;
      await setCookies((ctx) => {
        try {
          ctx.cookies.set('c', 'v', options);
        } catch (error) {
          caught = error;
        }
      });
      assert.equal((caught as { code?: string }).code, 'FLO_ERR_BAD_COOKIE');
      assert.match(String(caught), /requires secure: true/);
    }
  });

  test("names, values and attributes a header cannot carry are refused, the cookie package's reason kept", async () => {
    for (const [name, value, options] of [
      ['a b', 'v', {}],
      ['c', 'v', { domain: 'exa mple.com' }],
      ['c', 'v', { path: '/a;b' }],
      ['c', 'v', { maxAge: 1.5 }],
      ['c', 'v', { expires: new Date(Number.NaN) }],
    ] as const) {
      let caught: unknown;
      await setCookies((ctx) => {
        try {
          ctx.cookies.set(name, value, options);
        } catch (error) {
          caught = error;
        }
      });
      assert.ok(caught instanceof TypeError, `${name} ${JSON.stringify(options)}`);
      assert.equal((caught as { code?: string }).code, 'FLO_ERR_BAD_COOKIE');
    }
  });

  test('signed without secrets is a misuse error, a 500 for the client', async () => {
    const app = cookieApp((ctx) => ctx.cookies.get('session', { signed: true }), {});
    const res = await app.inject({ url: '/', headers: { cookie: 'session=x' } });
    assert.equal(res.statusCode, 500);
    await app.close();
  });

  test('cookies go with a streamed reply and with an error response', async () => {
    const app = cookieApp((ctx) => {
      ctx.cookies.set('seen', '1');
      if (ctx.query['fail'] !== undefined) throw KError.conflict('taken');
      ctx.send(Readable.from(['a', 'b']), 'text/plain');
    });
    const streamed = await app.inject('/');
    assert.equal(streamed.body, 'ab');
    assert.deepEqual(streamed.headers['set-cookie'], ['seen=1; Path=/; HttpOnly; SameSite=Lax']);
    const failed = await app.inject('/?fail');
    assert.equal(failed.statusCode, 409);
    assert.deepEqual(failed.headers['set-cookie'], ['seen=1; Path=/; HttpOnly; SameSite=Lax']);
    await app.close();
  });

  test('what a handler sets after its timeout answered is dropped', async () => {
    const { app } = testApp();
    let set = false;
    app.registerController(
      controller({
        method: 'GET',
        path: '/',
        timeoutMs: 20,
        handler: async (ctx) => {
          ctx.cookies.set('early', '1');
          await new Promise((resolve) => ctx.context().signal.addEventListener('abort', resolve));
          ctx.cookies.set('late', '1');
          set = true;
        },
      }),
    );
    const res = await app.inject('/');
    assert.equal(res.statusCode, 503);
    assert.equal(set, true);
    // the one set before the timeout goes with the 503, as with any error response; the late one never
    assert.deepEqual(res.headers['set-cookie'], ['early=1; Path=/; HttpOnly; SameSite=Lax']);
    await app.close();
  });

  test('a middleware sets cookies on the way out', async () => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/',
        middlewares: [
          async (ctx, next) => {
            await next();
            ctx.cookies.set('visits', String(Number(ctx.cookies.get('visits') ?? '0') + 1));
          },
        ],
        handler: () => 'ok',
      }),
    );
    const res = await app.inject({ url: '/', headers: { cookie: 'visits=4' } });
    assert.deepEqual(res.headers['set-cookie'], ['visits=5; Path=/; HttpOnly; SameSite=Lax']);
    await app.close();
  });
});

describe('schema.cookies', () => {
  test('validates the cookies as sent, with a 400 naming the cookie', async () => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/',
        schema: {
          cookies: {
            type: 'object',
            required: ['session'],
            properties: { session: { type: 'string', minLength: 4 }, page: { type: 'integer' } },
          },
        },
        handler: (ctx) => ({ page: ctx.cookies.get('page') ?? null }),
      }),
    );
    const ok = await app.inject({ url: '/', headers: { cookie: 'session=abcd; page=2' } });
    assert.equal(ok.statusCode, 200);
    // coerced for the check only: read back as sent
    assert.deepEqual(ok.json(), { page: '2' });
    const missing = await app.inject('/');
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json().errors?.[0] ?? missing.json().details?.errors?.[0], {
      in: 'cookies',
      path: '/session',
      message: "must have required property 'session'",
      keyword: 'required',
      params: { missingProperty: 'session' },
    });
    const wrong = await app.inject({ url: '/', headers: { cookie: 'session=abcd; page=two' } });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.json().detail, /^cookies \/page: must be integer/);
    await app.close();
  });
});
