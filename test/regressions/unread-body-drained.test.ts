import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/app/app.ts';
import { KError } from '../../src/errors/k-error.ts';
import { controller, testApp } from '../helpers/app.ts';
import { flood, httpRequest, watchAcceptedSockets } from '../helpers/http.ts';

/**
 * What broke: a response sent before the request's body was read (404, 405,
 * 415, a middleware's 401, a GET route, a handler failing first) kept the
 * connection alive, so node:http read and discarded the whole body — 10 MB
 * here, any size up to `timeouts.requestMs` in general. Now such a response
 * carries `Connection: close` and the server stops reading.
 */

const SENT = 10 * 1024 * 1024;
const MARGIN = 128 * 1024;

describe('a response sent before the body was read closes the connection', () => {
  let app: App;
  let port: number;
  let listening: Promise<void>;
  const sockets = watchAcceptedSockets();

  before(async () => {
    ({ app } = testApp({ logging: { level: 'silent' } }));
    app.registerController(
      controller(
        { method: 'GET', path: '/ok', handler: () => ({ ok: true }) },
        { method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) },
        {
          method: 'POST',
          path: '/guarded',
          middlewares: [
            () => {
              throw KError.unauthorized();
            },
          ],
          handler: (ctx) => ({ body: ctx.body }),
        },
      ),
    );
    listening = app.listen();
    port = (await app.ready()).port;
  });

  after(async () => {
    sockets.stop();
    await app.close();
    await listening;
  });

  const cases = [
    { request: 'POST /nowhere', type: 'application/json', status: 404 },
    { request: 'PUT /echo', type: 'application/json', status: 405 },
    { request: 'POST /echo', type: 'text/plain', status: 415 },
    { request: 'POST /guarded', type: 'application/json', status: 401 },
    { request: 'GET /ok', type: 'application/json', status: 200 },
  ];
  for (const c of cases) {
    test(`${c.request} with a 10 MB body: ${c.status}, and the body is not drained`, async () => {
      const head = `${c.request} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${c.type}\r\nContent-Length: ${SENT}\r\n\r\n`;
      const { response, clientPort } = await flood(port, head, { bytes: SENT, timeoutMs: 5_000 });
      assert.match(response, new RegExp(`^HTTP/1\\.1 ${c.status} `));
      assert.match(response, /\r\nConnection: close\r\n/);
      const read = sockets.byClientPort(clientPort)?.bytesRead;
      assert.ok(read !== undefined && read <= MARGIN, `the server read ${read} bytes`);
      assert.equal((await httpRequest(port, '/ok')).status, 200);
    });
  }

  test('a request whose body arrived in full keeps its connection', async () => {
    const res = await app.inject({ method: 'POST', url: '/nowhere', headers: { 'content-type': 'application/json' }, payload: '{}' });
    assert.equal(res.statusCode, 404);
    assert.notEqual(res.headers['connection'], 'close');
  });
});
