import { type TestContext, test } from 'node:test';
import { WebSocket } from 'ws';
import { controller, serve, testApp } from '../../helpers/app.ts';
import { upgradeOutcome } from '../../helpers/websocket.ts';

/** Opens a WebSocket: the socket, or the refused upgrade's status, headers and body. */
const open = (url: string) => upgradeOutcome(new WebSocket(url));

test('a WebSocket route counts its upgrades: past the limit the upgrade is refused with the 429 problem, before any handshake', async (t: TestContext) => {
  const { app } = testApp();
  let opened = 0;
  app.registerController(
    controller({
      method: 'GET',
      path: '/live',
      rateLimit: { max: 2, windowMs: 60_000 },
      websocket: (socket) => {
        opened++;
        socket.send('hi');
      },
    }),
  );
  const port = await serve(t, app);
  for (let i = 0; i < 2; i++) {
    const result = await open(`ws://127.0.0.1:${port}/live`);
    t.assert.ok('socket' in result, 'admitted');
    result.socket.close();
  }
  const refused = await open(`ws://127.0.0.1:${port}/live`);
  t.assert.ok(!('socket' in refused));
  t.assert.equal(refused.status, 429);
  t.assert.equal(refused.headers['retry-after'], '60');
  t.assert.equal(refused.headers['ratelimit'], '"GET /live";r=0;t=60');
  t.assert.equal((JSON.parse(refused.body) as { code: string }).code, 'RATE_LIMITED');
  t.assert.equal(opened, 2, 'the refused upgrade never reached the websocket function');
});
