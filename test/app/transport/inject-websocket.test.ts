import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import type { WebSocketRefused } from '../../../src/app/transport/inject-websocket.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

/**
 * An App as a test builds it from a service's config: a fixed port and a metrics port that another
 * process (`flotilla dev`, say) may hold, never bound here. `injectWebSocket` needs neither.
 */
function appWithSockets(t: TestContext) {
  const { app, logs } = testApp({ port: 1, metrics: { port: 2 }, shutdown: { timeoutMs: 1_000 } }, { serveMetrics: false });
  t.after(() => app.close());
  app.onRequest((ctx) => {
    if (ctx.path === '/private' && ctx.headers['authorization'] !== 'Bearer letmein') throw KError.unauthorized('a token is needed');
  });
  app.registerController(
    controller(
      {
        method: 'GET',
        path: '/echo',
        websocket: (socket) => {
          socket.on('message', (data) => socket.send(`echo: ${String(data)}`));
        },
      },
      // a message sent at once: it may arrive with the handshake's answer
      { method: 'GET', path: '/hello/:name', websocket: (socket, ctx) => socket.send(`hello ${ctx.params['name']}`) },
      { method: 'GET', path: '/private', websocket: (socket) => socket.send('secret') },
      { method: 'GET', path: '/chat', protocols: ['chat.v2', 'chat.v1'], websocket: (socket) => socket.send(socket.protocol) },
    ),
  );
  return { app, logs };
}

/** Whether something accepts a connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('app.injectWebSocket(path, options)', () => {
  test('opens a socket through the pipeline on an App that does not listen; nothing stays bound', async (t: TestContext) => {
    const { app, logs } = appWithSockets(t);
    const socket = await app.injectWebSocket('/echo');

    socket.send('ping');
    const [reply] = await once(socket, 'message');
    t.assert.strictEqual(String(reply), 'echo: ping');
    const line = await logs.waitFor((l) => l['msg'] === 'request completed');
    t.assert.strictEqual(line['status'], 101, 'the upgrade is a request of the pipeline, logged as one');
    t.assert.strictEqual(app.metricsPort, undefined, 'no metrics endpoint');
    const port = (socket as unknown as { _socket: { remotePort: number } })._socket.remotePort;
    t.assert.strictEqual(await accepts(port), false, 'its listener closed once the handshake was answered');

    socket.close(1000, 'done');
    const [code] = await once(socket, 'close');
    t.assert.strictEqual(code, 1000);
  });

  test('a message the route sends at once is not lost to a listener added after await', async (t: TestContext) => {
    const { app } = appWithSockets(t);
    for (let i = 0; i < 20; i++) {
      const socket = await app.injectWebSocket(`/hello/n${i}`);
      const [message] = await once(socket, 'message');
      t.assert.strictEqual(String(message), `hello n${i}`);
      socket.close();
    }
  });

  test('headers reach the hooks; a refused upgrade rejects with the answer', async (t: TestContext) => {
    const { app } = appWithSockets(t);
    await t.assert.rejects(app.injectWebSocket('/private'), (error: WebSocketRefused) => {
      t.assert.strictEqual(error.statusCode, 401);
      t.assert.match(String(error.headers['content-type']), /^application\/problem\+json/);
      t.assert.strictEqual((JSON.parse(error.body) as { code: string }).code, 'UNAUTHORIZED');
      return true;
    });
    await t.assert.rejects(app.injectWebSocket('/nowhere'), { statusCode: 404 });

    const socket = await app.injectWebSocket('/private', { headers: { authorization: 'Bearer letmein' } });
    const [message] = await once(socket, 'message');
    t.assert.strictEqual(String(message), 'secret');
    socket.close();
  });

  test('offers the protocols given', async (t: TestContext) => {
    const { app } = appWithSockets(t);
    const socket = await app.injectWebSocket('/chat', { protocols: ['chat.v1'] });
    t.assert.strictEqual(socket.protocol, 'chat.v1');
    const [message] = await once(socket, 'message');
    t.assert.strictEqual(String(message), 'chat.v1');
    socket.close();
  });

  test("the App's close closes the sockets it opened, with 1001", async (t: TestContext) => {
    const { app } = appWithSockets(t);
    const socket = await app.injectWebSocket('/echo');
    const closed = once(socket, 'close');
    await app.close();
    const [code] = await closed;
    t.assert.strictEqual(code, 1001);
  });
});
