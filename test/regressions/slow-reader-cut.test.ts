import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { controller, testApp } from '../helpers/app.ts';

// A client that asks for a large response and never reads it used to hold its connection (and the
// response's memory) for as long as it liked: nothing timed out once the request had arrived. Then it
// was closed with a FIN, which queued behind the unsent megabytes: the kernel kept them (FIN_WAIT1)
// for as long as the client kept its window shut. It is reset now.
test('a client that stops reading is cut after timeouts.socketMs', async () => {
  const { app, logs } = testApp({ timeouts: { socketMs: 300 } });
  const big = 'x'.repeat(32 * 1024 * 1024);
  app.registerController(controller({ method: 'GET', path: '/big', handler: (ctx) => ctx.send(big) }));
  void app.listen();
  const { port } = await app.ready();
  try {
    const socket = connect(port, '127.0.0.1');
    const reset = new Promise<string | undefined>((resolve) => {
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
      socket.once('end', () => resolve('end'));
    });
    socket.pause();
    socket.write('GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const aborted = await logs.waitFor((l) => l['msg'] === 'request aborted' && l['path'] === '/big');
    assert.equal(aborted['aborted'], true);
    assert.ok((aborted['durationMs'] as number) >= 300, 'not before the timeout');
    socket.resume();
    assert.equal(await reset, 'ECONNRESET', 'reset, so the kernel drops the unsent bytes at once');
    socket.destroy();
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 200, 'the server carries on');
  } finally {
    await app.close();
  }
});
