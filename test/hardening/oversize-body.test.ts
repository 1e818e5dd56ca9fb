import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/app/app.ts';
import { controller, testApp } from '../helpers/app.ts';
import { flood, httpRequest, watchAcceptedSockets } from '../helpers/http.ts';

/**
 * A 10 MiB body against a 1 KiB limit: a 413 problem, with or without
 * Content-Length, after the server read at most the limit plus a small margin.
 * The bytes are counted on the server's side of the connection: what the
 * client manages to write says little, loopback buffers hold megabytes.
 */

const LIMIT = 1024;
const SENT = 10 * 1024 * 1024;
/** One read of node:net (64 KiB) and the request stream's buffer (16 KiB), rounded up. */
const MARGIN = 128 * 1024;

describe('oversize bodies', () => {
  let app: App;
  let port: number;
  let listening: Promise<void>;
  const sockets = watchAcceptedSockets();

  before(async () => {
    ({ app } = testApp({ limits: { bodyBytes: LIMIT }, logging: { level: 'silent' } }));
    app.registerController(controller({ method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) }));
    listening = app.listen();
    port = (await app.ready()).port;
  });

  after(async () => {
    sockets.stop();
    await app.close();
    await listening;
  });

  const cases = [
    { name: 'with a Content-Length', head: `Content-Length: ${SENT}`, chunked: false },
    { name: 'chunked, without Content-Length', head: 'Transfer-Encoding: chunked', chunked: true },
  ];
  for (const c of cases) {
    test(`${c.name}: 413 after reading at most the limit plus ${MARGIN / 1024} KiB`, async () => {
      const head = `POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${c.head}\r\n\r\n`;
      const { response, clientPort } = await flood(port, head, { bytes: SENT, chunked: c.chunked });
      assert.match(response, /^HTTP\/1\.1 413 /);
      assert.match(response, /\r\nContent-Type: application\/problem\+json\r\n/);
      assert.match(response, /"code":"PAYLOAD_TOO_LARGE"/);
      const read = sockets.byClientPort(clientPort)?.bytesRead;
      assert.ok(read !== undefined && read <= LIMIT + MARGIN, `the server read ${read} bytes`);
      const next = await httpRequest(port, '/echo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' });
      assert.equal(next.status, 200);
    });
  }
});
