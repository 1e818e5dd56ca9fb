import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serve, testApp } from '../helpers/app.ts';
import { openSocket, readUntilClose } from '../helpers/http.ts';

/**
 * What broke: node:http answered a request without Host itself, a bare 400
 * with no problem body and no request id; and a request with two Host headers
 * was served, with the first one. Both are now 400 problems from the pipeline,
 * closing the connection.
 */

async function exchange(port: number, request: string): Promise<{ head: string; problem: Record<string, unknown> }> {
  const socket = await openSocket(port);
  const text = readUntilClose(socket);
  socket.write(request);
  const response = await text;
  const split = response.indexOf('\r\n\r\n');
  return { head: response.slice(0, split + 2), problem: JSON.parse(response.slice(split + 4)) as Record<string, unknown> };
}

test('a request without Host, or with two, is a 400 problem that closes the connection', async (t) => {
  const { app } = testApp();
  const port = await serve(t, app);
  const cases = [
    { request: 'GET /health HTTP/1.1\r\n\r\n', detail: 'the Host header is missing' },
    { request: 'GET /health HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n', detail: 'the Host header is repeated' },
    { request: 'GET /health HTTP/1.1\r\nHost: a.example\r\nhost: a.example\r\n\r\n', detail: 'the Host header is repeated' },
  ];
  for (const c of cases) {
    const { head, problem } = await exchange(port, c.request);
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\nContent-Type: application\/problem\+json\r\n/);
    assert.match(head, /\r\nConnection: close\r\n/);
    const requestId = /\r\nX-Request-Id: ([^\r]+)\r\n/.exec(head)?.[1];
    assert.equal(problem['code'], 'BAD_REQUEST');
    assert.equal(problem['detail'], c.detail);
    assert.equal(problem['requestId'], requestId);
  }
  // HTTP/1.0 has no Host requirement
  const http10 = await exchange(port, 'GET /health HTTP/1.0\r\n\r\n');
  assert.match(http10.head, /^HTTP\/1\.1 200 /);
  assert.equal(http10.problem['status'], 'pass');
});
