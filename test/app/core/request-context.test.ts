import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestContext } from '../../../src/app/core/request-context.ts';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';
import { openSocket } from '../../helpers/http.ts';

describe('ctx.context()', () => {
  test('its signal aborts when the client goes away', async (t) => {
    const { app, logs } = testApp();
    const entered = gate();
    const aborted = gate<unknown>();
    app.registerController(
      controller({
        method: 'GET',
        path: '/wait',
        handler: async (ctx) => {
          const { signal } = ctx.context();
          signal.addEventListener('abort', () => aborted.resolve(signal.reason), { once: true });
          entered.resolve();
          await aborted.promise;
          return 'too late';
        },
      }),
    );
    const port = await serve(t, app);
    const socket = await openSocket(port);
    socket.write('GET /wait HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: gone-1\r\n\r\n');
    await entered.promise;
    socket.destroy();
    const reason = await aborted.promise;
    assert.match(String((reason as Error).message), /client closed the connection/);
    assert.equal((reason as Error).name, 'ClientGoneError');
    const line = await logs.waitFor((l) => l['msg'] === 'request aborted');
    assert.equal(line['level'], 'info', "the client's doing: no warning");
    assert.equal(line['aborted'], true);
    assert.equal(line['requestId'], 'gone-1');
    assert.equal(line['route'], '/wait');
  });

  test('its signal stays quiet for a request that completes', async () => {
    const { app } = testApp();
    let context: RequestContext | undefined;
    app.registerController(
      controller({
        method: 'GET',
        path: '/quick',
        handler: (ctx) => {
          context = ctx.context();
          return 'done';
        },
      }),
    );
    assert.equal((await app.inject('/quick')).statusCode, 200);
    assert.equal(context?.signal.aborted, false);
  });

  test('its signal aborts when the shutdown deadline passes', async () => {
    const { app } = testApp({ shutdown: { timeoutMs: 300 } });
    const entered = gate();
    app.registerController(
      controller({
        method: 'GET',
        path: '/long',
        handler: async (ctx) => {
          const { signal } = ctx.context();
          entered.resolve();
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          return { reason: (signal.reason as Error).message };
        },
      }),
    );
    const response = app.inject('/long');
    await entered.promise;
    await app.close();
    const res = await response;
    assert.deepEqual(res.json(), { reason: 'shutdown budget of 300 ms spent' });
  });

  test('carries the request id and a logger whose lines carry it; the same object on every call', async () => {
    const { app, logs } = testApp();
    let same = false;
    app.registerController(
      controller({
        method: 'GET',
        path: '/ctx',
        handler: (ctx) => {
          const context = ctx.context();
          same = context === ctx.context();
          context.logger.info({ step: 'repository' }, 'querying');
          return { requestId: context.requestId, ctxRequestId: ctx.requestId };
        },
      }),
    );
    const res = await app.inject({ url: '/ctx', headers: { 'x-request-id': 'req-ctx-1' } });
    assert.deepEqual(res.json(), { requestId: 'req-ctx-1', ctxRequestId: 'req-ctx-1' });
    assert.equal(same, true);
    const line = await logs.waitFor((l) => l['msg'] === 'querying');
    assert.equal(line['requestId'], 'req-ctx-1');
    assert.equal(line['step'], 'repository');
  });
});
