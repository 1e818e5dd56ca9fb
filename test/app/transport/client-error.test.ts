import { type TestContext, test } from 'node:test';
import { serve, testApp } from '../../helpers/app.ts';
import { openSocket, readUntilClose } from '../../helpers/http.ts';

// A request node:http cannot parse never reaches the pipeline, yet it is answered and logged like one:
// a problem with a request id, the same id in X-Request-Id and on a log line.

async function send(port: number, request: string): Promise<string> {
  const socket = await openSocket(port);
  const text = readUntilClose(socket);
  socket.write(request);
  return text;
}

test('an unparsable request: a problem with its request id, in X-Request-Id and on a log line', async (t: TestContext) => {
  const { app, logs } = testApp({ limits: { headerBytes: 2048 } });
  const port = await serve(t, app);
  const cases = [
    { request: 'NOT A REQUEST\r\n\r\n', status: 400, code: 'BAD_REQUEST' },
    { request: `GET /${'a'.repeat(4096)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, status: 414, code: 'URI_TOO_LONG' },
    { request: `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`, status: 431, code: 'HEADERS_TOO_LARGE' },
  ];
  for (const { request, status, code } of cases) {
    const text = await send(port, request);
    t.assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `));
    const header = /\r\nX-Request-Id: ([0-9a-f-]{36})\r\n/.exec(text)?.[1];
    const problem = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: string; requestId: string };
    t.assert.strictEqual(problem.code, code);
    t.assert.strictEqual(problem.requestId, header);
    const line = logs.lines.find((l) => l['requestId'] === header);
    t.assert.strictEqual(line?.['msg'], 'request refused before it was parsed');
    t.assert.strictEqual(line?.['status'], status);
    t.assert.strictEqual(line?.['code'], code);
    t.assert.strictEqual(line?.['ip'], '127.0.0.1');
  }
});
