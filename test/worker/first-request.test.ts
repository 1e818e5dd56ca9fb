import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { onFirstRequest } from '../../src/worker/first-request.ts';
import { controller, serve, testApp } from '../helpers/app.ts';
import { openSocket } from '../helpers/websocket.ts';

test('calls back once, on the first request, before its handler; the channel keeps serving its other subscribers', async (t: TestContext) => {
  const events: string[] = [];
  let others = 0;
  const other = () => {
    others++;
  };
  // subscribed after it: leaving the channel while it publishes must not make the next subscriber miss the request
  onFirstRequest(() => events.push('first request'));
  subscribe('http.server.request.start', other);
  t.after(() => unsubscribe('http.server.request.start', other));
  const server = createServer((_req, res) => {
    events.push('handler');
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  for (let i = 0; i < 3; i++) await (await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })).text();

  t.assert.deepStrictEqual(events, ['first request', 'handler', 'handler', 'handler']);
  t.assert.strictEqual(others, 3, 'another subscriber saw every request, the first included');
});

test('an upgrade request counts as the first request too (node:http publishes none for it)', async (t: TestContext) => {
  let firsts = 0;
  onFirstRequest(() => firsts++);
  const { app } = testApp();
  app.registerController(controller({ method: 'GET', path: '/live', websocket: (socket) => socket.close(1000) }));
  const port = await serve(t, app);
  const socket = await openSocket(`ws://127.0.0.1:${port}/live`);
  await new Promise((resolve) => socket.socket.once('close', resolve));
  t.assert.strictEqual(firsts, 1);
});
