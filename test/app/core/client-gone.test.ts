import { describe, type TestContext, test } from 'node:test';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import type { Middleware } from '../../../src/app/core/route.ts';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';
import { openSocket } from '../../helpers/http.ts';

const NOT_RUN = 'client gone before the handler: not run';

describe('a client gone before the handler starts', () => {
  for (const leave of ['destroy', 'end'] as const) {
    test(`is not run (the client's socket: ${leave === 'end' ? 'half-closed' : 'closed'}), logged at debug, counted, answered nothing`, async (t: TestContext) => {
      const { app, logs } = testApp({ logging: { level: 'debug' } });
      const hookEntered = gate();
      const release = gate();
      let ran = 0;
      app.registerController(
        controller({
          method: 'GET',
          path: '/report',
          onRequest: [
            async () => {
              hookEntered.resolve();
              await release.promise;
            },
          ],
          handler: () => {
            ran++;
            return { ran };
          },
        }),
      );
      const port = await serve(t, app);
      const socket = await openSocket(port);
      socket.on('error', () => {});
      socket.write('GET /report HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: gone-early\r\n\r\n');
      await hookEntered.promise;
      socket[leave]();
      const aborted = await logs.waitFor((l) => l['msg'] === 'request aborted' && l['requestId'] === 'gone-early');
      t.assert.strictEqual(aborted['status'], 499);
      t.assert.strictEqual(aborted['level'], 'info');
      release.resolve();
      const notRun = await logs.waitFor((l) => l['msg'] === NOT_RUN);
      t.assert.strictEqual(notRun['level'], 'debug');
      t.assert.strictEqual(notRun['route'], '/report');
      t.assert.strictEqual(ran, 0, 'the handler never ran');
      const metrics = await app.registry.metrics();
      t.assert.match(metrics, /^flotilla_requests_shed_total\{reason="client-gone"\} 1$/m);
      t.assert.match(metrics, /^http_requests_total\{method="GET",route="\/report",status="499"\} 1$/m);
      t.assert.deepStrictEqual(
        logs.lines.filter((l) => l['level'] === 'error' || l['level'] === 'warn'),
        [],
      );
    });
  }

  test('gone while a middleware ran: the body is not read and the handler not run', async (t: TestContext) => {
    const { app, logs } = testApp({ logging: { level: 'debug' } });
    const entered = gate();
    const release = gate();
    let ran = 0;
    const slow: Middleware = async (_ctx, next) => {
      entered.resolve();
      await release.promise;
      await next();
    };
    app.registerController(
      controller({
        method: 'POST',
        path: '/orders',
        middlewares: [slow],
        handler: (ctx: Ctx) => {
          ran++;
          return ctx.body;
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await openSocket(port);
    socket.on('error', () => {});
    // the head only: the body would never come
    socket.write('POST /orders HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n');
    await entered.promise;
    socket.destroy();
    await logs.waitFor((l) => l['msg'] === 'request aborted');
    release.resolve();
    await logs.waitFor((l) => l['msg'] === NOT_RUN);
    t.assert.strictEqual(ran, 0);
    t.assert.match(await app.registry.metrics(), /^flotilla_requests_shed_total\{reason="client-gone"\} 1$/m);
    t.assert.deepStrictEqual(
      logs.lines.filter((l) => l['level'] === 'error'),
      [],
    );
  });
});

describe('a client gone while the handler runs', () => {
  const rejections = {
    "the signal's reason": (signal: AbortSignal) => signal.reason,
    "an AbortError, as fetch's": () => new DOMException('This operation was aborted', 'AbortError'),
  };
  for (const [name, rejection] of Object.entries(rejections)) {
    test(`aborts its signal; a handler failing only because of that (${name}) is no error: no stack, one info line`, async (t: TestContext) => {
      const { app, logs } = testApp();
      const entered = gate();
      const failed = gate();
      app.registerController(
        controller({
          method: 'GET',
          path: '/search',
          handler: async (ctx) => {
            const { signal } = ctx.context();
            entered.resolve();
            try {
              // what a fetch or a driver does with the request's signal
              await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(rejection(signal)), { once: true }));
            } finally {
              failed.resolve();
            }
          },
        }),
      );
      const port = await serve(t, app);
      const socket = await openSocket(port);
      socket.on('error', () => {});
      socket.write('GET /search HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await entered.promise;
      socket.destroy();
      await failed.promise;
      const aborted = await logs.waitFor((l) => l['msg'] === 'request aborted');
      t.assert.strictEqual(aborted['level'], 'info');
      t.assert.strictEqual(aborted['status'], 499);
      t.assert.strictEqual(aborted['err'], undefined, 'no stack');
      // the pipeline saw the rejection before this turn ends
      await new Promise((resolve) => setImmediate(resolve));
      t.assert.deepStrictEqual(
        logs.lines.filter((l) => l['level'] === 'error' || l['level'] === 'warn'),
        [],
      );
      t.assert.match(
        await app.registry.metrics(),
        /^flotilla_requests_shed_total\{reason="client-gone"\} 0$/m,
        'it ran: not counted as shed',
      );
    });
  }

  test('a genuine failure after the client left is still an error', async (t: TestContext) => {
    const { app, logs } = testApp();
    const entered = gate();
    const release = gate();
    app.registerController(
      controller({
        method: 'GET',
        path: '/buggy',
        handler: async () => {
          entered.resolve();
          await release.promise;
          throw new TypeError('a bug');
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await openSocket(port);
    socket.on('error', () => {});
    socket.write('GET /buggy HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await entered.promise;
    socket.destroy();
    await logs.waitFor((l) => l['msg'] === 'request aborted');
    release.resolve();
    const line = await logs.waitFor((l) => l['level'] === 'error');
    t.assert.match(String((line['err'] as { message?: string }).message), /a bug/);
  });
});
