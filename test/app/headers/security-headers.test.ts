import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { headerLines, securityHeaderList } from '../../../src/app/headers/security-headers.ts';
import { DEFAULTS } from '../../../src/config/defaults.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { answerOverloaded } from '../../../src/process/overloaded-reply.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';

const DEFAULT_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

function headersApp(securityHeaders?: KConfig['securityHeaders']) {
  const { app } = testApp(securityHeaders === undefined ? {} : { securityHeaders });
  app.registerController(
    controller(
      { method: 'GET', path: '/books', handler: () => [] },
      {
        method: 'GET',
        path: '/fails',
        handler: () => {
          throw KError.conflict('taken');
        },
      },
      { method: 'GET', path: '/crashes', handler: () => Promise.reject(new Error('boom')) },
      {
        method: 'GET',
        path: '/stream',
        handler: (ctx) =>
          ctx.send(
            (async function* () {
              yield 'a';
            })(),
            'text/plain',
          ),
      },
      {
        method: 'GET',
        path: '/framable',
        handler: (ctx) => {
          ctx.setHeader('X-Frame-Options', 'SAMEORIGIN').setHeader('Content-Security-Policy', "frame-ancestors 'self'");
          ctx.send('<p>widget</p>', 'text/html');
        },
      },
    ),
  );
  return app;
}

function pick(headers: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.filter((n) => headers[n] !== undefined).map((n) => [n, headers[n]]));
}
const NAMES = [...Object.keys(DEFAULT_HEADERS), 'strict-transport-security'];

describe('security headers', () => {
  test('are on every reply by default: a route, a problem, a 500, a 404, a 405, /health, a stream', async () => {
    const app = headersApp();
    for (const [method, url, status] of [
      ['GET', '/books', 200],
      ['GET', '/fails', 409],
      ['GET', '/crashes', 500],
      ['GET', '/nowhere', 404],
      ['DELETE', '/books', 405],
      ['GET', '/health', 200],
      ['GET', '/stream', 200],
    ] as const) {
      const res = await app.inject({ method, url });
      assert.equal(res.statusCode, status, url);
      assert.deepEqual(pick(res.headers, NAMES), DEFAULT_HEADERS, `${method} ${url}`);
    }
    await app.close();
  });

  test('the docs page keeps its own Content-Security-Policy', async () => {
    const app = headersApp();
    const page = await app.inject('/docs');
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /^default-src 'self'; script-src 'self'/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    await app.close();
  });

  test('a route replaces any of them with ctx.setHeader', async () => {
    const app = headersApp();
    const res = await app.inject('/framable');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['content-security-policy'], "frame-ancestors 'self'");
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    await app.close();
  });

  test('each one has its switch', async () => {
    const cases: [KConfig['securityHeaders'], string][] = [
      [{ contentTypeOptions: false }, 'x-content-type-options'],
      [{ frameOptions: false }, 'x-frame-options'],
      [{ contentSecurityPolicy: '' }, 'content-security-policy'],
      [{ referrerPolicy: false }, 'referrer-policy'],
      [{ crossOriginResourcePolicy: false }, 'cross-origin-resource-policy'],
    ];
    for (const [options, missing] of cases) {
      const app = headersApp(options);
      const res = await app.inject('/books');
      const expected: Record<string, string> = { ...DEFAULT_HEADERS };
      delete expected[missing];
      assert.deepEqual(pick(res.headers, NAMES), expected, JSON.stringify(options));
      await app.close();
    }
  });

  test('values are configurable', async () => {
    const app = headersApp({
      frameOptions: 'SAMEORIGIN',
      referrerPolicy: 'strict-origin-when-cross-origin',
      crossOriginResourcePolicy: 'cross-origin',
      contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'",
    });
    const res = await app.inject('/books');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['referrer-policy'], 'strict-origin-when-cross-origin');
    assert.equal(res.headers['cross-origin-resource-policy'], 'cross-origin');
    assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
    await app.close();
  });

  test('enabled: false sends none of them', async () => {
    const app = headersApp({ enabled: false, strictTransportSecurity: true });
    const res = await app.inject('/books');
    assert.deepEqual(pick(res.headers, NAMES), {});
    await app.close();
  });

  test('Strict-Transport-Security is opt-in, with its max-age, includeSubDomains and preload', async () => {
    assert.equal(
      securityHeaderList(DEFAULTS.securityHeaders).find(([n]) => n === 'Strict-Transport-Security'),
      undefined,
    );
    const on = headersApp({ strictTransportSecurity: true });
    assert.equal((await on.inject('/books')).headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
    await on.close();
    const tuned = headersApp({ strictTransportSecurity: true, hstsMaxAgeS: 600, hstsIncludeSubDomains: false, hstsPreload: true });
    assert.equal((await tuned.inject('/books')).headers['strict-transport-security'], 'max-age=600; preload');
    await tuned.close();
  });

  test('a value that cannot be a header is refused by the config', () => {
    assert.throws(
      () => testApp({ securityHeaders: { contentSecurityPolicy: "frame-ancestors 'none'\r\nX-Evil: 1" } }),
      /contentSecurityPolicy/,
    );
    assert.throws(() => testApp({ securityHeaders: { frameOptions: 'ALLOW-FROM x' as 'DENY' } }), /frameOptions/);
  });

  test('the list is computed once and frozen', () => {
    const list = securityHeaderList(DEFAULTS.securityHeaders);
    assert.ok(Object.isFrozen(list) && list.every((pair) => Object.isFrozen(pair)));
    assert.equal(
      headerLines(list),
      "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nContent-Security-Policy: frame-ancestors 'none'\r\n" +
        'Referrer-Policy: no-referrer\r\nCross-Origin-Resource-Policy: same-origin\r\n',
    );
  });

  test("a malformed request's raw problem carries them too", async (t) => {
    const app = headersApp();
    const port = await serve(t, app);
    const reply = await rawExchange(port, 'GET /books HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 400 /);
    assert.match(reply, /\r\nX-Content-Type-Options: nosniff\r\n/);
    assert.match(reply, /\r\nCross-Origin-Resource-Policy: same-origin\r\n/);
  });

  test('the OVERLOADED 503 written to the socket carries the lines it is given', async () => {
    const server = createServer((socket) =>
      answerOverloaded(socket, { retryAfterS: 1, headers: headerLines(securityHeaderList(DEFAULTS.securityHeaders)) }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const reply = await rawExchange(port, 'GET /books HTTP/1.1\r\nHost: x\r\n\r\n');
    server.close();
    assert.match(reply, /^HTTP\/1\.1 503 [^\r]*\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n/);
    assert.match(reply, /\r\nRetry-After: 1\r\n/);
  });
});

/** Writes `request` on a fresh connection and resolves with everything the server sent before closing. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}
