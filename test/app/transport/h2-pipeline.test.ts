import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type ClientHttp2Session, connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { App } from '../../../src/app/app.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';
import { httpRequest } from '../../helpers/http.ts';
import type { LogSink } from '../../helpers/sink.ts';

// The request pipeline on HTTP/2 (h2c here; over TLS it is the same compatibility API behind ALPN):
// every part a route can use answers on h2 as it does on HTTP/1.1, which shares the port.

interface H2Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let app: App;
let logs: LogSink;
let port: number;
let session: ClientHttp2Session;
let listening: Promise<void>;

/** One request on the shared h2c session. */
function h2(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': init.method ?? 'GET', ':path': path, ...init.headers });
    const chunks: Buffer[] = [];
    let head: Record<string, string | string[] | undefined> = {};
    stream.on('response', (headers) => {
      head = headers as typeof head;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(chunks) }));
    stream.on('error', reject);
    stream.end(init.body);
  });
}

const json = (reply: H2Reply) => JSON.parse(reply.body.toString('utf8')) as Record<string, unknown>;

const files = mkdtempSync(join(tmpdir(), 'flotilla-h2-static-'));
writeFileSync(join(files, 'hello.txt'), 'hello over h2\n');

before(async () => {
  ({ app, logs } = testApp({
    http2: true,
    timeouts: { handlerMs: 20_000 },
    compression: { thresholdBytes: 100 },
    limits: { bodyBytes: 65_536 },
  }));
  app.registerController(
    controller(
      {
        method: 'POST',
        path: '/items',
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
        },
        handler: (ctx) => {
          ctx.created({ name: (ctx.body as { name: string }).name, host: ctx.host, protocol: ctx.protocol });
        },
      },
      {
        method: 'GET',
        path: '/guarded',
        onRequest: [
          (ctx) => {
            if (ctx.headers.authorization !== 'Bearer ok') throw KError.unauthorized('a token is required');
          },
        ],
        handler: () => ({ ok: true }),
      },
      { method: 'GET', path: '/big', handler: () => ({ items: Array.from({ length: 200 }, (_, i) => `item ${i}`) }) },
      {
        method: 'GET',
        path: '/events',
        kind: 'sse',
        handler: (ctx) =>
          ctx.sse(
            (async function* () {
              yield { data: 'one', id: '1' };
              yield { data: 'two', id: '2' };
            })(),
          ),
      },
      { method: 'GET', path: '/limited', rateLimit: { max: 1, windowMs: 60_000 }, handler: () => ({ ok: true }) },
      {
        method: 'GET',
        path: '/slow',
        timeoutMs: 50,
        handler: (ctx) => new Promise((resolve) => ctx.context().signal.addEventListener('abort', () => resolve({ late: true }))),
      },
      { method: 'GET', path: '/socket', websocket: (socket) => socket.close() },
      {
        method: 'GET',
        path: '/connection-header',
        handler: (ctx) => {
          // an HTTP/1.1 connection header, which h2 forbids: dropped on h2, never an error
          ctx.setHeader('Connection', 'close');
          // node:http's setHeader returns the response: calls chain on h2 too
          ctx.res.setHeader('X-One', '1').setHeader('X-Two', '2');
          return { ok: true };
        },
      },
    ),
  );
  app.serveStatic('/files', files);
  listening = app.listen();
  ({ port } = await app.ready());
  session = connect(`http://127.0.0.1:${port}`);
  await new Promise((resolve, reject) => {
    session.once('connect', resolve);
    session.once('error', reject);
  });
});

after(async () => {
  session.close();
  await app.close();
  await listening;
  rmSync(files, { recursive: true, force: true });
});

describe('the pipeline on h2c', () => {
  test('a validated JSON body, with or without Content-Length: 201 with ctx.host from :authority; the 400 problem for a bad one', async (t: TestContext) => {
    const body = JSON.stringify({ name: 'a' });
    const created = await h2('/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    t.assert.strictEqual(created.status, 201, created.body.toString());
    t.assert.deepStrictEqual(json(created), { name: 'a', host: `127.0.0.1:${port}`, protocol: 'http' });
    t.assert.match(String(created.headers['x-request-id']), /^[0-9a-f-]{36}$/);

    // with a Content-Length, as curl sends one; the first had none, which HTTP/2 does not require
    const length = (text: string) => ({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    const sized = await h2('/items', { method: 'POST', headers: length(body), body });
    t.assert.strictEqual(sized.status, 201, sized.body.toString());

    const refused = await h2('/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"","x":1}' });
    t.assert.strictEqual(refused.status, 400);
    t.assert.strictEqual(refused.headers['content-type'], 'application/problem+json');
    t.assert.strictEqual(json(refused)['code'], 'VALIDATION_FAILED');
  });

  test('a body past the limit is a 413 that ends its stream only: the session serves the next request', async (t: TestContext) => {
    const big = JSON.stringify({ name: 'x'.repeat(70_000) });
    const refused = await h2('/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    t.assert.strictEqual(refused.status, 413);
    t.assert.strictEqual(json(refused)['code'], 'PAYLOAD_TOO_LARGE');
    t.assert.strictEqual(session.closed || session.destroyed, false);
    t.assert.strictEqual((await h2('/health')).status, 200);
  });

  test('an onRequest hook answers 401 with its header', async (t: TestContext) => {
    const refused = await h2('/guarded');
    t.assert.strictEqual(refused.status, 401);
    t.assert.strictEqual(json(refused)['code'], 'UNAUTHORIZED');
    t.assert.strictEqual((await h2('/guarded', { headers: { authorization: 'Bearer ok' } })).status, 200);
  });

  test('a compressible reply is gzipped for a client that asks', async (t: TestContext) => {
    const reply = await h2('/big', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(reply.status, 200);
    t.assert.strictEqual(reply.headers['content-encoding'], 'gzip');
    t.assert.strictEqual((JSON.parse(gunzipSync(reply.body).toString()) as { items: string[] }).items.length, 200);
  });

  test('server-sent events stream and end', async (t: TestContext) => {
    const reply = await h2('/events');
    t.assert.strictEqual(reply.status, 200);
    t.assert.match(String(reply.headers['content-type']), /^text\/event-stream/);
    const text = reply.body.toString();
    t.assert.match(text, /id: 1\ndata: one\n\n/);
    t.assert.match(text, /id: 2\ndata: two\n\n/);
  });

  test('a rate limit counts h2 requests: the second in the window is a 429 with Retry-After', async (t: TestContext) => {
    t.assert.strictEqual((await h2('/limited')).status, 200);
    const limited = await h2('/limited');
    t.assert.strictEqual(limited.status, 429);
    t.assert.ok(Number(limited.headers['retry-after']) > 0);
  });

  test('a handler past its time limit is a 503 HANDLER_TIMEOUT', async (t: TestContext) => {
    const reply = await h2('/slow');
    t.assert.strictEqual(reply.status, 503);
    t.assert.strictEqual(json(reply)['code'], 'HANDLER_TIMEOUT');
  });

  test('a Connection header set by a handler is dropped, the stream answers; setHeader chains', async (t: TestContext) => {
    const reply = await h2('/connection-header');
    t.assert.strictEqual(reply.status, 200);
    t.assert.strictEqual(reply.headers['connection'], undefined);
    t.assert.deepStrictEqual([reply.headers['x-one'], reply.headers['x-two']], ['1', '2']);
    t.assert.strictEqual(session.closed || session.destroyed, false, 'the session is still open');
  });

  test('static files: the file, a range of it, a 304 for its ETag', async (t: TestContext) => {
    const whole = await h2('/files/hello.txt');
    t.assert.strictEqual(whole.status, 200);
    t.assert.strictEqual(whole.body.toString(), 'hello over h2\n');
    const range = await h2('/files/hello.txt', { headers: { range: 'bytes=0-4' } });
    t.assert.strictEqual(range.status, 206);
    t.assert.strictEqual(range.body.toString(), 'hello');
    const cached = await h2('/files/hello.txt', { headers: { 'if-none-match': String(whole.headers['etag']) } });
    t.assert.strictEqual(cached.status, 304);
  });

  test('a WebSocket route asked over h2 is an ordinary request: 426, the socket stays on HTTP/1.1', async (t: TestContext) => {
    const reply = await h2('/socket');
    t.assert.strictEqual(reply.status, 426);
    t.assert.strictEqual(json(reply)['code'], 'UPGRADE_REQUIRED');
  });

  test('/health and the docs answer; an unknown path is the 404 problem', async (t: TestContext) => {
    t.assert.strictEqual((await h2('/health')).status, 200);
    t.assert.strictEqual((await h2('/docs/openapi.json')).status, 200);
    const missing = await h2('/nothing');
    t.assert.strictEqual(missing.status, 404);
    t.assert.strictEqual(json(missing)['code'], 'ROUTE_NOT_FOUND');
  });

  test('HTTP/1.1 on the same port meanwhile, and request lines say which protocol', async (t: TestContext) => {
    const h1 = await httpRequest(port, '/health');
    t.assert.strictEqual(h1.status, 200);
    const lines = logs.lines.filter((l) => l['msg'] === 'request completed');
    t.assert.ok(lines.some((l) => l['protocol'] === 'h2' && l['tls'] === false && l['path'] === '/guarded'));
    t.assert.ok(lines.some((l) => l['protocol'] === 'h1' && l['path'] === '/health'));
  });
});
