import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controller, serve, testApp } from '../helpers/app.ts';
import { openSocket, readUntilClose } from '../helpers/http.ts';

/**
 * What broke: the 426 of a WebSocket route to a plain GET said `Connection: Upgrade`, which made node:http
 * keep the connection open although the request said `Connection: close`. A client pooling connections
 * (Prism's proxy, node-fetch with Node's keep-alive agent) sent its next request on it, and got a 400 "the
 * request could not be parsed" for a valid request. The 426 now says `Connection: Upgrade, close` then, and
 * the connection closes; without `close` in the request, it stays open for the next one.
 */

test('the 426 of a WebSocket route keeps the close a request asks for', async (t) => {
  const { app } = testApp();
  app.registerController(
    controller({ method: 'GET', path: '/feed', websocket: () => {} }, { method: 'GET', path: '/next', handler: () => ({ ok: true }) }),
  );
  const port = await serve(t, app);

  const closing = await openSocket(port);
  const closed = readUntilClose(closing);
  closing.write('GET /feed HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  const text = await closed;
  assert.match(text, /^HTTP\/1\.1 426 Upgrade Required\r\n/);
  assert.match(text, /\r\nConnection: Upgrade, close\r\n/);
  assert.equal(text.match(/HTTP\/1\.1/g)?.length, 1, 'one answer, and the connection closed');

  const kept = await openSocket(port);
  const both = readUntilClose(kept);
  kept.write('GET /feed HTTP/1.1\r\nHost: localhost\r\n\r\nGET /next HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  const answers = await both;
  assert.match(answers, /^HTTP\/1\.1 426 Upgrade Required\r\n[\s\S]*\r\nConnection: Upgrade\r\n/);
  assert.match(answers, /HTTP\/1\.1 200 OK\r\n[\s\S]*\{"ok":true\}$/);
});
