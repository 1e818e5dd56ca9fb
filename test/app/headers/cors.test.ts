import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { App } from '../../../src/app/app.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

const SITE = 'https://app.example.com';

function corsApp(cors: KConfig['cors']): App {
  const { app } = testApp(cors === undefined ? {} : { cors });
  app.registerController(
    controller(
      { method: 'GET', path: '/books', handler: () => [] },
      { method: 'PUT', path: '/books/:id', handler: (ctx) => ctx.noContent() },
      {
        method: 'GET',
        path: '/negotiated',
        handler: (ctx) => {
          ctx.setHeader('Vary', 'Accept-Encoding');
          return { ok: true };
        },
      },
      {
        method: 'GET',
        path: '/varies',
        handler: (ctx) => {
          ctx.setHeader('Vary', 'accept-language, origin');
          return { ok: true };
        },
      },
      {
        method: 'GET',
        path: '/fails',
        handler: () => {
          throw KError.conflict();
        },
      },
    ),
  );
  return app;
}

function preflight(app: App, origin: string, method = 'PUT', headers?: string) {
  return app.inject({
    method: 'OPTIONS',
    url: '/books/1',
    headers: {
      origin,
      'access-control-request-method': method,
      ...(headers === undefined ? {} : { 'access-control-request-headers': headers }),
    },
  });
}

describe('CORS', () => {
  test('disabled by default: no CORS headers, and no Vary: Origin', async () => {
    const app = corsApp(undefined);
    const res = await app.inject({ url: '/books', headers: { origin: SITE } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['vary'], 'Accept-Encoding');
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal((await app.inject('/books')).headers['vary'], 'Accept-Encoding');
    const negotiated = await app.inject({ url: '/negotiated', headers: { origin: SITE } });
    assert.equal(negotiated.headers['vary'], 'Accept-Encoding', "the handler's Vary as it set it");
    const problem = await app.inject({ url: '/fails', headers: { origin: SITE } });
    assert.equal(problem.statusCode, 409);
    assert.equal(problem.headers['vary'], 'Accept-Encoding');
  });

  test("on: Vary: Origin on every reply, added to a handler's Vary, never replacing it nor repeated", async () => {
    const app = corsApp({ origins: [SITE] });
    for (const headers of [{ origin: SITE }, { origin: 'https://evil.example' }, {}]) {
      const negotiated = await app.inject({ url: '/negotiated', headers });
      assert.equal(negotiated.statusCode, 200);
      assert.equal(negotiated.headers['vary'], 'Accept-Encoding, Origin', JSON.stringify(headers));
      const varies = await app.inject({ url: '/varies', headers });
      assert.equal(varies.headers['vary'], 'accept-language, origin, Accept-Encoding', 'Origin is listed once, in any case');
    }
    assert.equal((await app.inject('/books')).headers['vary'], 'Origin, Accept-Encoding', 'without an Origin too: caches must keep both');
  });

  test('origins compare without case in scheme and host; the port is part of the origin', async () => {
    const app = corsApp({ origins: ['https://app.example', 'http://Localhost:5173'], credentials: true });
    for (const [origin, allowed] of [
      ['HTTPS://App.Example', true],
      ['https://app.example', true],
      ['http://localhost:5173', true],
      ['http://LOCALHOST:5173', true],
      ['http://localhost:5174', false],
      ['https://app.example:8443', false],
      ['http://app.example', false],
    ] as const) {
      const res = await app.inject({ url: '/books', headers: { origin } });
      assert.equal(res.headers['access-control-allow-origin'], allowed ? origin : undefined, origin);
      const refusedPost = await app.inject({ method: 'PUT', url: '/books/1', headers: { origin, 'sec-fetch-site': 'cross-site' } });
      assert.equal(refusedPost.statusCode, allowed ? 204 : 403, `the CSRF check agrees with CORS: ${origin}`);
    }
  });

  test('an allowed origin is echoed, with the exposed headers', async () => {
    const app = corsApp({ origins: [SITE, 'http://localhost:5173'] });
    const res = await app.inject({ url: '/books', headers: { origin: SITE } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], SITE);
    assert.equal(res.headers['access-control-expose-headers'], 'X-Request-Id');
    assert.equal(res.headers['vary'], 'Origin, Accept-Encoding');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
  });

  test('an origin that is not allowed gets no CORS headers, and the request is still served', async () => {
    const app = corsApp({ origins: [SITE] });
    const res = await app.inject({ url: '/books', headers: { origin: 'https://evil.example' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['vary'], 'Origin, Accept-Encoding');
  });

  test("'*' allows any origin with a literal '*'", async () => {
    const app = corsApp({ origins: ['*'] });
    const res = await app.inject({ url: '/books', headers: { origin: 'https://anyone.example' } });
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['vary'], 'Origin, Accept-Encoding');
  });

  test('credentials echo the origin and allow credentials', async () => {
    const app = corsApp({ origins: [SITE], credentials: true });
    const res = await app.inject({ url: '/books', headers: { origin: SITE } });
    assert.equal(res.headers['access-control-allow-origin'], SITE);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
  });

  test('a preflight is answered 204 with methods, headers and max age, without running the route', async () => {
    const app = corsApp({ origins: [SITE], methods: ['GET', 'PUT'], allowedHeaders: ['Content-Type', 'Authorization'], maxAge: 120 });
    const res = await preflight(app, SITE, 'PUT', 'content-type, authorization');
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['access-control-allow-origin'], SITE);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, PUT');
    assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, Authorization');
    assert.equal(res.headers['access-control-max-age'], '120');
    assert.equal(res.headers['vary'], 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
  });

  test('without configured allowedHeaders a preflight allows the requested ones', async () => {
    const app = corsApp({ origins: [SITE] });
    const res = await preflight(app, SITE, 'PUT', 'x-custom');
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-headers'], 'x-custom');
    assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, PUT, PATCH, POST, DELETE');
    assert.equal(res.headers['access-control-max-age'], '600');
  });

  test('a preflight from an origin that is not allowed gets no CORS headers', async () => {
    const app = corsApp({ origins: [SITE] });
    const res = await preflight(app, 'https://evil.example');
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
    assert.equal(res.statusCode, 405);
  });

  test('error responses carry the CORS headers too, so the browser can read the problem', async () => {
    const app = corsApp({ origins: [SITE] });
    for (const url of ['/fails', '/missing']) {
      const res = await app.inject({ url, headers: { origin: SITE } });
      assert.ok(res.statusCode >= 400);
      assert.equal(res.headers['access-control-allow-origin'], SITE, url);
      assert.equal(res.headers['vary'], 'Origin, Accept-Encoding');
    }
  });

  test("'*' together with credentials is rejected at startup", () => {
    assert.throws(() => testApp({ cors: { origins: ['*'], credentials: true } }), {
      name: 'ConfigError',
      message: /cors\.origins: '\*' cannot be combined with credentials/,
    });
  });

  test('origins must be exact http(s) origins', () => {
    assert.throws(() => testApp({ cors: { origins: ['app.example.com'] } }), { name: 'ConfigError', message: /cors\.origins\[0\]/ });
    assert.throws(() => testApp({ cors: { origins: ['https://app.example.com/path'] } }), { name: 'ConfigError' });
  });
});
