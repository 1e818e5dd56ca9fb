import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Agent, type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';
import { describe, type TestContext, test } from 'node:test';
import cookieParser from 'cookie-parser';
import helmet from 'helmet';
import { Passport } from 'passport';
import { BasicStrategy } from 'passport-http';
import { fromConnect } from '../../../src/app/connect/from-connect.ts';
import type { Middleware, Route } from '../../../src/app/core/route.ts';
import { KError } from '../../../src/errors/k-error.ts';
import type { KConfig } from '../../../src/index.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';

interface User {
  name: string;
}

/** A passport instance of its own, with the basic strategy over one user. */
function basicAuth(options: { failWithError?: boolean } = {}): Middleware[] {
  const passport = new Passport();
  passport.use(
    new BasicStrategy((name, password, done) => {
      if (name === 'broken') return done(new Error('the user store is down'));
      return done(null, name === 'ada' && password === 'lovelace' ? ({ name } satisfies User) : false);
    }),
  );
  return [fromConnect(passport.initialize()), fromConnect(passport.authenticate('basic', { session: false, ...options }))];
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function app(routes: Route[], middlewares: Middleware[], config: KConfig = {}) {
  const { app, logs } = testApp({ logging: { level: 'error' }, ...config });
  app.group('/', ...middlewares).registerController(controller(...routes));
  return { app, logs };
}

describe('fromConnect with helmet', () => {
  test("helmet's headers are on flotilla's replies, a problem's too, and flotilla's own stay", async () => {
    const { app: a } = app(
      [
        { method: 'GET', path: '/books', handler: () => [{ id: 1 }] },
        {
          method: 'GET',
          path: '/missing',
          handler: () => {
            throw KError.notFound('no such book');
          },
        },
      ],
      [fromConnect(helmet())],
    );
    const ok = await a.inject('/books');
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), [{ id: 1 }]);
    assert.equal(ok.headers['content-type'], 'application/json; charset=utf-8');
    assert.match(String(ok.headers['x-request-id']), /\S/);
    assert.match(String(ok.headers['content-security-policy']), /default-src 'self'/);
    assert.equal(ok.headers['x-content-type-options'], 'nosniff');
    assert.equal(ok.headers['x-frame-options'], 'SAMEORIGIN');
    assert.match(String(ok.headers['strict-transport-security']), /max-age=\d+/);
    assert.equal(ok.headers['x-powered-by'], undefined);
    const missing = await a.inject('/missing');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json');
    assert.equal(missing.json().detail, 'no such book');
    assert.equal(missing.headers['x-content-type-options'], 'nosniff');
    assert.match(String(missing.headers['content-security-policy']), /default-src 'self'/);
    await a.close();
  });
});

describe('fromConnect with cookie-parser', () => {
  const secret = 'a secret of at least some length';
  const sign = (value: string) => `s:${value}.${createHmac('sha256', secret).update(value).digest('base64').replace(/=+$/, '')}`;
  const whoami: Route = {
    method: 'GET',
    path: '/whoami',
    handler: (ctx) => {
      const req = ctx.req as IncomingMessage & { cookies: Record<string, string>; signedCookies: Record<string, string | false> };
      return { cookies: req.cookies, signed: req.signedCookies };
    },
  };

  test('cookies and signed cookies are parsed onto ctx.req; a tampered signed cookie reads false', async () => {
    const { app: a } = app([whoami], [fromConnect(cookieParser(secret))]);
    const cookie = `theme=dark; sid=${encodeURIComponent(sign('u42'))}; forged=${encodeURIComponent(sign('u42').replace('u42', 'u43'))}`;
    const res = await a.inject({ method: 'GET', url: '/whoami', headers: { cookie } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { cookies: { theme: 'dark' }, signed: { sid: 'u42', forged: false } });
    const none = await a.inject('/whoami');
    assert.deepEqual(none.json(), { cookies: {}, signed: {} });
    await a.close();
  });
});

describe('fromConnect with passport (basic strategy)', () => {
  let runs = 0;
  const me: Route = {
    method: 'GET',
    path: '/me',
    handler: (ctx) => {
      runs++;
      return { user: (ctx.req as IncomingMessage & { user?: User }).user };
    },
  };

  test('right credentials: the handler runs with req.user', async () => {
    const { app: a } = app([me], basicAuth());
    const res = await a.inject({ method: 'GET', url: '/me', headers: { authorization: basic('ada', 'lovelace') } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { user: { name: 'ada' } });
    await a.close();
  });

  test("no or wrong credentials: passport's own 401 challenge is the reply, written once; the handler does not run", async () => {
    const { app: a, logs } = app([me], basicAuth());
    const before = runs;
    for (const headers of [{}, { authorization: basic('ada', 'wrong') }]) {
      const res = await a.inject({ method: 'GET', url: '/me', headers });
      assert.equal(res.statusCode, 401);
      assert.equal(String(res.headers['www-authenticate']), 'Basic realm="Users"');
      assert.equal(res.body, 'Unauthorized');
      assert.equal(res.headers['x-request-id'] !== undefined, true);
    }
    assert.equal(runs, before);
    assert.deepEqual(
      logs.lines.filter((l) => Number(l['level']) >= 40),
      [],
      'no error: nothing was written twice',
    );
    await a.close();
  });

  test('failWithError: the failure reaches the error boundary as a 401 problem, with the challenge header', async () => {
    const { app: a } = app([me], basicAuth({ failWithError: true }));
    const res = await a.inject('/me');
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(String(res.headers['www-authenticate']), 'Basic realm="Users"');
    const body = res.json();
    assert.equal(body.code, 'UNAUTHORIZED');
    assert.equal(body.detail, 'Unauthorized');
    assert.equal(body.instance, '/me');
    await a.close();
  });

  test('a failing verify callback is next(err): a 500 problem, its message hidden in production and logged', async () => {
    const { app: a, logs } = app([me], basicAuth(), { env: 'production' });
    const res = await a.inject({ method: 'GET', url: '/me', headers: { authorization: basic('broken', 'x') } });
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.doesNotMatch(res.body, /user store/);
    assert.ok(logs.lines.some((l) => l['msg'] === 'request failed' && JSON.stringify(l).includes('the user store is down')));
    await a.close();
  });

  test('on a real socket: the 401 passport wrote leaves the connection usable for the next request', async (t: TestContext) => {
    const { app: a } = app([me], basicAuth());
    const port = await serve(t, a);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; body: string; reused: boolean }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/me', agent, headers }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    const refused = await get({});
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="Users"');
    assert.equal(refused.headers['content-length'], String('Unauthorized'.length));
    assert.equal(refused.body, 'Unauthorized');
    const allowed = await get({ authorization: basic('ada', 'lovelace') });
    assert.equal(allowed.status, 200);
    assert.deepEqual(JSON.parse(allowed.body), { user: { name: 'ada' } });
    assert.equal(allowed.reused, true, 'the same keep-alive connection');
  });
});

describe('fromConnect with hand-written middlewares', () => {
  const hello: Route = { method: 'GET', path: '/hello', handler: () => ({ hello: 'world' }) };

  test("headers set with res.setHeader before next() are part of flotilla's reply", async () => {
    const { app: a } = app(
      [hello],
      [
        fromConnect((_req, res, next) => {
          res.setHeader('X-Served-By', 'connect');
          next();
        }),
      ],
    );
    const res = await a.inject('/hello');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { hello: 'world' });
    assert.equal(res.headers['x-served-by'], 'connect');
    await a.close();
  });

  test('a reply the middleware ends itself (a redirect) is kept; outer middlewares that set headers afterwards do no harm', async () => {
    const outer: Middleware = async (ctx, next) => {
      await next();
      ctx.setHeader('X-After', 'ignored: the head is gone');
    };
    let ran = false;
    const { app: a, logs } = app(
      [{ method: 'GET', path: '/old', handler: () => (ran = true) }],
      [
        outer,
        fromConnect((_req, res) => {
          res.writeHead(301, { Location: '/new' });
          setImmediate(() => res.end());
        }),
      ],
    );
    const res = await a.inject('/old');
    assert.equal(res.statusCode, 301);
    assert.equal(res.headers['location'], '/new');
    assert.equal(res.headers['x-after'], undefined);
    assert.equal(res.body, '');
    assert.equal(ran, false);
    assert.deepEqual(
      logs.lines.filter((l) => Number(l['level']) >= 40),
      [],
    );
    await a.close();
  });

  test('next(err) with an http-errors style status is that problem; expose: false hides its message', async () => {
    const failing = (error: object) => fromConnect((_req, _res, next) => next(Object.assign(new Error('you may not'), error)));
    const forbidden = app([hello], [failing({ status: 403, expose: true, headers: { 'X-Reason': 'policy' } })]).app;
    const res = await forbidden.inject('/hello');
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['x-reason'], 'policy');
    assert.deepEqual([res.json().code, res.json().detail], ['FORBIDDEN', 'you may not']);
    const hidden = app([hello], [failing({ statusCode: 400, expose: false })]).app;
    const bad = await hidden.inject('/hello');
    assert.deepEqual([bad.statusCode, bad.json().code, bad.json().detail], [400, 'BAD_REQUEST', 'Bad Request']);
    const teapot = app([hello], [failing({ status: 418 })]).app;
    assert.deepEqual((await teapot.inject('/hello')).json().code, 'HTTP_418');
    const unavailable = app([hello], [failing({ status: 503 })]).app;
    const down = await unavailable.inject('/hello');
    assert.deepEqual([down.statusCode, down.json().detail], [503, 'Service Unavailable']);
    await Promise.all([forbidden.close(), hidden.close(), teapot.close(), unavailable.close()]);
  });

  test('a throw, a rejected promise and a plain next(err) are 500 problems', async () => {
    const cases = [
      fromConnect(() => {
        throw new Error('thrown');
      }),
      fromConnect(async () => {
        throw new Error('rejected');
      }),
      fromConnect((_req, _res, next) => next('a string')),
    ];
    for (const mw of cases) {
      const { app: a } = app([hello], [mw]);
      const res = await a.inject('/hello');
      assert.equal(res.statusCode, 500);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.json().code, 'INTERNAL');
      await a.close();
    }
  });

  test('next() called twice, or after the reply, changes nothing', async () => {
    let calls = 0;
    const { app: a } = app(
      [{ method: 'GET', path: '/count', handler: () => ({ calls: ++calls }) }],
      [
        fromConnect((_req, _res, next) => {
          next();
          next();
        }),
      ],
    );
    assert.deepEqual((await a.inject('/count')).json(), { calls: 1 });
    await a.close();
    const { app: b } = app(
      [hello],
      [
        fromConnect((_req, res, next) => {
          res.statusCode = 204;
          res.end();
          next();
        }),
      ],
    );
    const res = await b.inject('/hello');
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    await b.close();
  });

  test('an Express error-handling middleware (four parameters) is refused', () => {
    assert.throws(
      () => fromConnect(((_err: unknown, _req: unknown, _res: unknown, next: () => void) => next()) as never),
      /error-handling middleware .* app\.setErrorHandler/,
    );
  });
});
