import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { controller, serve, testApp } from '../../helpers/app.ts';
import { connectionRefused, httpRequest, openSocket, readUntil, readUntilClose } from '../../helpers/http.ts';

describe('listen and ready', () => {
  test('ready() resolves with the bound address; listen() resolves once close() has completed', async () => {
    const { app, logs } = testApp({ serviceName: 'books' });
    app.registerController(controller({ method: 'GET', path: '/hello', handler: () => ({ hello: 'world' }) }));
    let listenResolved = false;
    const listening = app.listen().then(() => {
      listenResolved = true;
    });
    const address = await app.ready();
    assert.equal(address.host, '127.0.0.1');
    assert.ok(address.port > 0);
    const res = await httpRequest(address.port, '/hello');
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { hello: 'world' });
    assert.equal(listenResolved, false);
    const line = await logs.waitFor((l) => l['msg'] === 'books listening');
    assert.deepEqual(line['address'], address);
    await app.close();
    await listening;
    assert.equal(listenResolved, true);
    assert.equal(await connectionRefused(address.port), true);
  });

  test('ready() and listen() reject when the port is taken (EADDRINUSE)', async (t) => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.after(() => blocker.close());
    const taken = (blocker.address() as { port: number }).port;
    const { app } = testApp({ port: taken });
    const listening = app.listen();
    await assert.rejects(app.ready(), { code: 'EADDRINUSE' });
    await assert.rejects(listening, { code: 'EADDRINUSE' });
    await app.close();
  });

  test('listen() cannot be called twice', async () => {
    const { app } = testApp();
    const listening = app.listen();
    await app.ready();
    await assert.rejects(app.listen(), /cannot be called when the App is listening/);
    await app.close();
    await listening;
    await assert.rejects(app.listen(), /cannot be called when the App is closed/);
  });

  test('close() is idempotent: every call resolves, the hooks run once', async () => {
    const { app } = testApp();
    let runs = 0;
    app.onShutdown(() => {
      runs++;
    });
    const listening = app.listen();
    await app.ready();
    const first = app.close();
    const second = app.close();
    assert.equal(first, second);
    await Promise.all([first, second, listening]);
    await app.close();
    assert.equal(runs, 1);
    assert.equal(app.cleanShutdown, true);
  });

  test('close() right after listen() lets the start finish, then shuts down: listen() and ready() settle', async () => {
    const { app } = testApp();
    let hookRan = false;
    app.onShutdown(() => {
      hookRan = true;
    });
    const listening = app.listen();
    const ready = app.ready();
    await app.close();
    await listening;
    const { port } = await ready;
    assert.equal(hookRan, true);
    assert.equal(await connectionRefused(port), true);
  });

  test('close() before listen() runs the hooks and leaves the App closed', async () => {
    const { app } = testApp();
    let runs = 0;
    app.onShutdown(() => {
      runs++;
    });
    await app.close();
    assert.equal(runs, 1);
    await assert.rejects(app.listen(), /closed/);
  });

  test('await using closes the server at the end of the block', async () => {
    let port = 0;
    let hookRan = false;
    {
      await using app = testApp().app;
      app.onShutdown(() => {
        hookRan = true;
      });
      void app.listen();
      ({ port } = await app.ready());
      assert.equal((await httpRequest(port, '/health')).status, 200);
    }
    assert.equal(hookRan, true);
    assert.equal(await connectionRefused(port), true);
  });
});

describe('server limits', () => {
  test('a request head above limits.headerBytes is a 431 problem', async (t) => {
    const port = await serve(t, testApp({ limits: { headerBytes: 2048 } }).app);
    const socket = await openSocket(port);
    const response = readUntilClose(socket);
    socket.write(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`);
    const text = await response;
    assert.match(text, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.match(text, /Content-Type: application\/problem\+json/);
    assert.match(text, /"code":"HEADERS_TOO_LARGE"/);
    assert.equal((await httpRequest(port, '/health', { headers: { 'x-small': 'a'.repeat(512) } })).status, 200);
  });

  test('keep-alive connections are kept 72 s by default, above common load balancer idle timeouts', async (t) => {
    const port = await serve(t, testApp().app);
    const socket = await openSocket(port);
    socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const head = await readUntil(socket, '\r\n\r\n');
    assert.match(head, /\r\nKeep-Alive: timeout=72\r\n/);
    assert.match(head, /\r\nConnection: keep-alive\r\n/);
    socket.destroy();
  });

  test('a request head that does not arrive within timeouts.headersMs is a 408', async (t) => {
    const port = await serve(t, testApp({ timeouts: { headersMs: 100, requestMs: 200 } }).app);
    const socket = await openSocket(port);
    const response = readUntilClose(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: local');
    const text = await response;
    assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(text, /"code":"REQUEST_TIMEOUT"/);
  });

  test('a body that does not arrive within timeouts.requestMs is a 408, and the server keeps serving', async (t) => {
    const { app } = testApp({ timeouts: { headersMs: 100, requestMs: 200 } });
    app.registerController(controller({ method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) }));
    const port = await serve(t, app);
    const socket = await openSocket(port);
    const response = readUntilClose(socket);
    socket.write('POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":');
    const text = await response;
    assert.match(text, /^HTTP\/1\.1 408 /);
    assert.equal((await httpRequest(port, '/health')).status, 200);
  });

  test('a request without a Host header is a 400', async (t) => {
    const port = await serve(t, testApp().app);
    const socket = await openSocket(port);
    const response = readUntilClose(socket);
    socket.write('GET /health HTTP/1.1\r\n\r\n');
    assert.match(await response, /^HTTP\/1\.1 400 /);
  });
});
