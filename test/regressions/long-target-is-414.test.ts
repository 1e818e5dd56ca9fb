import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serve, testApp } from '../helpers/app.ts';
import { httpRequest, openSocket, readUntilClose } from '../helpers/http.ts';

/**
 * What broke: a request target longer than `limits.headerBytes` was answered
 * 431 (headers too large) although its headers were small; it is a 414
 * URI_TOO_LONG problem now. Large headers after a short request line stay 431.
 */

async function send(port: number, request: string): Promise<string> {
  const socket = await openSocket(port);
  const text = readUntilClose(socket);
  socket.write(request);
  return text;
}

test('a request line above the head limit is 414; headers above it are 431', async (t) => {
  const { app } = testApp({ limits: { headerBytes: 2048 } });
  const port = await serve(t, app);
  for (const length of [2100, 20_000, 1 << 20]) {
    const text = await send(port, `GET /${'a'.repeat(length)}?q=1 HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 414 URI Too Long\r\n/, `a ${length}-byte path`);
    assert.match(text, /\r\nContent-Type: application\/problem\+json\r\n/);
    assert.match(text, /"code":"URI_TOO_LONG"/);
  }
  const headers = await send(port, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`);
  assert.match(headers, /^HTTP\/1\.1 431 /);
  assert.equal((await httpRequest(port, '/health')).status, 200);
});
