import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { ReadableStream } from 'node:stream/web';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { controller, serve, testApp } from '../../helpers/app.ts';

const STANDALONE = fileURLToPath(new URL('../../fixtures/streams/standalone.ts', import.meta.url));

/** GETs `path` and reads the whole body, counting bytes; `aborted` when the connection ended before the body did. */
function download(port: number, path: string, onChunk?: (bytes: number, destroy: () => void) => void) {
  return new Promise<{ status: number; type: string; bytes: number; body: string; aborted: boolean }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let bytes = 0;
      let body = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (body.length < 4096) body += chunk.toString('utf8');
        onChunk?.(bytes, () => req.destroy());
      });
      const done = (aborted: boolean) =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), bytes, body, aborted });
      res.on('end', () => done(false));
      res.on('error', () => done(true));
      res.on('aborted', () => done(true));
    });
    req.on('error', (error) => (req.destroyed ? resolve({ status: 0, type: '', bytes: 0, body: '', aborted: true }) : reject(error)));
    req.end();
  });
}

/** A Readable of `mb` MiB of 1 KiB lines, produced as the client reads (never buffered whole). */
function csvLines(mb: number, onDestroy?: () => void): Readable {
  const line = Buffer.from(`${'x'.repeat(1023)}\n`);
  let left = mb * 1024;
  return new Readable({
    read() {
      while (left > 0) {
        left--;
        if (!this.push(line)) return;
      }
      this.push(null);
    },
    destroy(error, callback) {
      onDestroy?.();
      callback(error);
    },
  });
}

describe('streamed responses', () => {
  test('a 50 MB stream goes out with backpressure and steady memory', async (t: TestContext) => {
    // the server in a process of its own: its RSS alone, not the client's garbage
    const child = spawn(process.execPath, ['--conditions=source', STANDALONE], { stdio: ['ignore', 'pipe', 'inherit'] });
    t.after(() => child.kill('SIGKILL'));
    let out = '';
    const port = await new Promise<number>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const found = /PORT (\d+)/.exec(out);
        if (found) resolve(Number(found[1]));
      });
    });
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) * 1024;
    const before = rss();
    let peak = before;
    const res = await download(port, '/export?mb=50', () => {
      peak = Math.max(peak, rss());
    });
    t.assert.strictEqual(res.status, 200);
    t.assert.strictEqual(res.type, 'text/csv');
    t.assert.strictEqual(res.bytes, 50 * 1024 * 1024);
    t.diagnostic(`the server's RSS grew by ${((peak - before) / 1048576).toFixed(1)} MB while 50 MB were sent`);
    t.assert.ok(peak - before < 40 * 1048576, 'the body was never held whole in memory');
  });

  test('the log line of a streamed response has the bytes sent', async (t: TestContext) => {
    const { app, logs } = testApp();
    app.registerController(controller({ method: 'GET', path: '/export', handler: (ctx) => ctx.send(csvLines(5), 'text/csv') }));
    const port = await serve(t, app);
    const res = await download(port, '/export');
    t.assert.strictEqual(res.bytes, 5 * 1024 * 1024);
    const line = logs.lines.find((l) => l.msg === 'request completed' && l['path'] === '/export');
    t.assert.strictEqual(line?.['bytes'], 5 * 1024 * 1024);
  });

  test('a client that goes away mid-stream destroys the source', async (t: TestContext) => {
    const { app } = testApp();
    const { promise: destroyed, resolve } = Promise.withResolvers<void>();
    app.registerController(controller({ method: 'GET', path: '/export', handler: () => csvLines(500, resolve) }));
    const port = await serve(t, app);
    const res = await download(port, '/export', (bytes, destroy) => {
      if (bytes > 1024 * 1024) destroy();
    });
    t.assert.ok(res.aborted);
    await destroyed;
  });

  test('an error mid-stream ends the connection and is logged with the request id', async (t: TestContext) => {
    const { app, logs } = testApp();
    async function* broken() {
      yield 'first line\n';
      await new Promise((r) => setTimeout(r, 20));
      throw new Error('the export query failed');
    }
    app.registerController(controller({ method: 'GET', path: '/export', handler: () => broken() }));
    const port = await serve(t, app);
    const res = await download(port, '/export');
    t.assert.strictEqual(res.status, 200);
    t.assert.ok(res.aborted, 'the body did not end normally');
    t.assert.strictEqual(res.body, 'first line\n');
    // the server notices the failure as the client does: the line may come a moment after the client saw the end
    for (let i = 0; i < 50 && !logs.lines.some((l) => l.msg === 'response stream failed'); i++) await new Promise((r) => setTimeout(r, 20));
    const logged = logs.lines.find((l) => l.msg === 'response stream failed');
    t.assert.ok(logged?.['requestId'], 'logged with the request id');
    t.assert.match(JSON.stringify(logged), /the export query failed/);
  });

  test('an error before the first chunk is an ordinary problem response', async (t: TestContext) => {
    const { app } = testApp();
    async function* failing(): AsyncGenerator<string> {
      await Promise.reject(new Error('no such export'));
      yield 'never';
    }
    app.registerController(controller({ method: 'GET', path: '/export', handler: () => failing() }));
    const res = await app.inject('/export');
    t.assert.strictEqual(res.statusCode, 500);
    t.assert.strictEqual(res.headers['content-type'], 'application/problem+json');
    await app.close();
  });

  test('web ReadableStreams and async iterables of strings or bytes stream too', async (t: TestContext) => {
    const { app } = testApp();
    app.registerController(
      controller(
        {
          method: 'GET',
          path: '/web',
          handler: () =>
            new ReadableStream({
              start(c) {
                c.enqueue(new TextEncoder().encode('web '));
                c.enqueue(new TextEncoder().encode('stream'));
                c.close();
              },
            }),
        },
        {
          method: 'GET',
          path: '/iter',
          handler: (ctx) =>
            ctx.send(
              (async function* () {
                yield 'a,';
                yield Buffer.from('b');
              })(),
              'text/plain; charset=utf-8',
            ),
        },
      ),
    );
    const port = await serve(t, app);
    const web = await download(port, '/web');
    t.assert.strictEqual(web.body, 'web stream');
    t.assert.strictEqual(web.type, 'application/octet-stream');
    const iter = await download(port, '/iter');
    t.assert.strictEqual(iter.body, 'a,b');
    t.assert.strictEqual(iter.type, 'text/plain; charset=utf-8');
  });

  test('a stream or event source replaced by an error is closed, not leaked', async (t: TestContext) => {
    const { app } = testApp();
    let closed = 0;
    async function* feed() {
      try {
        yield { data: 'never sent' };
      } finally {
        closed++;
      }
    }
    app.registerController(
      controller({
        method: 'GET',
        path: '/feed',
        middlewares: [
          async (_ctx, next) => {
            await next();
            throw new Error('the middleware failed after the handler');
          },
        ],
        handler: (ctx) => {
          const events = feed();
          void events.next(); // started: its finally runs when it is closed
          ctx.sse(events);
        },
      }),
    );
    const res = await app.inject('/feed');
    t.assert.strictEqual(res.statusCode, 500);
    for (let i = 0; i < 50 && closed === 0; i++) await new Promise((r) => setTimeout(r, 10));
    t.assert.strictEqual(closed, 1);
    await app.close();
  });
});
