import { Readable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import { HandlerTimeouts } from '../../../src/app/overload/handler-timeouts.ts';
import { DEADLINE, InFlight, SLOT } from '../../../src/app/overload/in-flight.ts';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';
import { httpRequest, openSocket, readUntil } from '../../helpers/http.ts';

const PROBLEM = 'application/problem+json';

/** A handler that waits for `release`, then does its late work; `done` resolves once it has. */
function lateHandler() {
  const entered = gate<AbortSignal>();
  const release = gate();
  const done = gate();
  const handler = async (ctx: Ctx) => {
    entered.resolve(ctx.context().signal);
    await release.promise;
    try {
      ctx.setHeader('X-Late', 'yes');
      ctx.res.write('late bytes');
      return { late: true };
    } finally {
      done.resolve();
    }
  };
  return { entered, release, done, handler };
}

describe('handler timeouts', () => {
  test('a handler past timeouts.handlerMs: 503 HANDLER_TIMEOUT, its signal aborts with a TimeoutError, what it does later is dropped', async (t: TestContext) => {
    const { app, logs } = testApp({ timeouts: { handlerMs: 40 } });
    const late = lateHandler();
    app.registerController(controller({ method: 'GET', path: '/late/:id', handler: late.handler }));
    app.registerController(controller({ method: 'GET', path: '/ok', handler: () => ({ ok: true }) }));
    const port = await serve(t, app);

    const socket = await openSocket(port);
    t.after(() => socket.destroy());
    socket.write('GET /late/1 HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const first = await readUntil(socket, '"code":"HANDLER_TIMEOUT"');
    t.assert.match(first, /^HTTP\/1\.1 503 /);
    t.assert.ok(first.includes(`Content-Type: ${PROBLEM}`), first);
    const signal = await late.entered.promise;
    t.assert.strictEqual(signal.aborted, true);
    t.assert.ok(signal.reason instanceof DOMException);
    t.assert.strictEqual((signal.reason as DOMException).name, 'TimeoutError');

    const rest: string[] = [];
    socket.on('data', (chunk: Buffer) => rest.push(chunk.toString()));
    late.release.resolve();
    await late.done.promise;
    // the same keep-alive connection serves the next request: no second response, no reset
    socket.write('GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const second = await readUntil(socket, '{"ok":true}');
    const after = rest.join('') + second;
    t.assert.match(after, /^HTTP\/1\.1 200 /, `nothing of the late handler came before the next response: ${after}`);
    t.assert.doesNotMatch(after, /late|X-Late/i);

    const warning = await logs.waitFor((l) => l['msg'] === 'handler timed out');
    t.assert.strictEqual(warning['level'], 'warn');
    t.assert.strictEqual(warning['route'], '/late/:id');
    t.assert.strictEqual(warning['timeoutMs'], 40);
    t.assert.strictEqual(logs.lines.filter((l) => l['msg'] === 'handler timed out').length, 1);
    const line = await logs.waitFor((l) => l['msg'] === 'request completed' && l['route'] === '/late/:id');
    t.assert.strictEqual(line['status'], 503);
    t.assert.deepStrictEqual(
      logs.lines.filter((l) => l['level'] === 'error'),
      [],
      'neither the late write nor the late result is an error',
    );
    t.assert.match(await app.registry.metrics(), /^flotilla_requests_shed_total\{reason="handler-timeout"\} 1$/m);
  });

  test("a route's timeoutMs overrides timeouts.handlerMs, and 0 turns it off", async (t: TestContext) => {
    const { app } = testApp({ timeouts: { handlerMs: 0 } });
    const entered = gate();
    const release = gate();
    const unlimited = async () => {
      entered.resolve();
      await release.promise;
      return { late: true };
    };
    app.registerController(
      controller(
        { method: 'GET', path: '/short', timeoutMs: 30, handler: () => new Promise(() => {}) },
        { method: 'GET', path: '/unlimited', timeoutMs: 0, handler: unlimited },
        { method: 'GET', path: '/default', handler: () => new Promise((resolve) => setTimeout(resolve, 60, { done: true })) },
      ),
    );
    const port = await serve(t, app);
    const pending = httpRequest(port, '/unlimited');
    await entered.promise;
    const short = await httpRequest(port, '/short');
    t.assert.strictEqual(short.status, 503);
    t.assert.strictEqual(JSON.parse(short.body).code, 'HANDLER_TIMEOUT');
    // started before /short with a larger limit than its own: had it one, it would be past it now
    release.resolve();
    const res = await pending;
    t.assert.strictEqual(res.status, 200);
    t.assert.deepStrictEqual(JSON.parse(res.body), { late: true });
    t.assert.strictEqual((await httpRequest(port, '/default')).status, 200, 'handlerMs 0: no limit');
  });

  test('a timed-out onRequest hook: the route work stops there, the handler never runs', async (t: TestContext) => {
    const { app } = testApp();
    const release = gate();
    const hookDone = gate();
    let ran = 0;
    app.registerController(
      controller({
        method: 'GET',
        path: '/guarded',
        timeoutMs: 30,
        onRequest: [
          async () => {
            await release.promise;
            hookDone.resolve();
          },
        ],
        handler: () => {
          ran++;
          return { ran };
        },
      }),
    );
    const res = await app.inject('/guarded');
    t.assert.strictEqual(res.statusCode, 503);
    t.assert.strictEqual(res.json().code, 'HANDLER_TIMEOUT');
    release.resolve();
    await hookDone.promise;
    await new Promise((resolve) => setImmediate(resolve));
    t.assert.strictEqual(ran, 0);
  });

  test('the error handler may map HANDLER_TIMEOUT like any other error', async (t: TestContext) => {
    const { app } = testApp();
    app.setErrorHandler((error, ctx) => {
      if ((error as { code?: string }).code === 'HANDLER_TIMEOUT') ctx.status(504).send('too slow');
      return undefined;
    });
    app.registerController(controller({ method: 'GET', path: '/stuck', timeoutMs: 20, handler: () => new Promise(() => {}) }));
    const res = await app.inject('/stuck');
    t.assert.strictEqual(res.statusCode, 504);
    t.assert.strictEqual(res.body, 'too slow');
  });

  test('a stream whose first chunk comes after the limit: 503, and the source is closed', async (t: TestContext) => {
    const { app } = testApp();
    const destroyed = gate();
    app.registerController(
      controller({
        method: 'GET',
        path: '/export',
        timeoutMs: 30,
        handler: (ctx) => {
          const source = new Readable({
            read() {},
            destroy(error, callback) {
              destroyed.resolve();
              callback(error);
            },
          });
          ctx.send(source, 'text/csv');
        },
      }),
    );
    const port = await serve(t, app);
    const res = await httpRequest(port, '/export');
    t.assert.strictEqual(res.status, 503);
    t.assert.strictEqual(JSON.parse(res.body).code, 'HANDLER_TIMEOUT');
    await destroyed.promise;
  });

  test('an event stream whose head went out outlives the limit: the timeout covers producing the reply only', async (t: TestContext) => {
    const { app } = testApp();
    const next = gate();
    app.registerController(
      controller(
        {
          method: 'GET',
          path: '/events',
          timeoutMs: 30,
          handler: (ctx) => {
            ctx.sse(
              (async function* () {
                await next.promise;
                yield { data: 'after the limit' };
              })(),
            );
          },
        },
        { method: 'GET', path: '/stuck', timeoutMs: 30, handler: () => new Promise(() => {}) },
      ),
    );
    const port = await serve(t, app);
    const events = httpRequest(port, '/events');
    // a request started later with the same limit times out: the stream's limit has passed too
    const stuck = await httpRequest(port, '/stuck');
    t.assert.strictEqual(stuck.status, 503);
    next.resolve();
    const res = await events;
    t.assert.strictEqual(res.status, 200);
    t.assert.match(res.body, /data: after the limit/);
  });
});

describe('HandlerTimeouts', () => {
  /** A request in flight as the pipeline leaves it: InFlight's fields, and whether its head went out. */
  const ctx = (headersSent: boolean) => ({ route: '', [SLOT]: -1, [DEADLINE]: 0, res: { headersSent } }) as unknown as Ctx;

  test('one timer for many requests, none once they are gone', async (t: TestContext) => {
    const inFlight = new InFlight();
    const timeouts = new HandlerTimeouts(inFlight, () => t.assert.fail('no request outlived its limit'));
    t.after(() => timeouts.stop());
    const armed = t.mock.method(globalThis, 'setTimeout');
    const requests = Array.from({ length: 100 }, () => ctx(false));
    const now = performance.now();
    for (const request of requests) {
      inFlight.enter(request);
      timeouts.watch(request, now + 20);
    }
    t.assert.strictEqual(armed.mock.callCount(), 1, 'a hundred requests share one timer');
    armed.mock.restore();
    for (const request of requests) inFlight.leave(request);
    // the timer fires, finds no request, and arms nothing more
    await new Promise((resolve) => setTimeout(resolve, 60));
    t.assert.strictEqual(inFlight.count, 0);
  });

  test('times out what is past its limit and still unanswered, not a reply whose head went out', async (t: TestContext) => {
    const inFlight = new InFlight();
    const streaming = ctx(true);
    const slow = ctx(false);
    const done = gate();
    const timedOut: Ctx[] = [];
    const watcher = new HandlerTimeouts<Ctx>(inFlight, (c) => {
      timedOut.push(c);
      // an answer ends the request while the timeouts are handled: the list changes under them
      inFlight.leave(c);
      done.resolve();
    });
    t.after(() => watcher.stop());
    for (const request of [streaming, slow]) {
      inFlight.enter(request);
      watcher.watch(request, performance.now() + 5);
    }
    await done.promise;
    t.assert.deepStrictEqual(timedOut, [slow]);
    t.assert.strictEqual(inFlight.count, 1, 'the streaming one goes on');
  });
});
