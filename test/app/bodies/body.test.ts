import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { App } from '../../../src/app/app.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';
import { httpRequest, openSocket, readUntilClose } from '../../helpers/http.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

function echoApp(config: KConfig = {}): App {
  const { app } = testApp(config);
  app.registerController(
    controller(
      { method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body === undefined ? 'none' : ctx.body }) },
      { method: 'PUT', path: '/small', bodyLimit: 16, handler: (ctx) => ({ body: ctx.body }) },
      { method: 'GET', path: '/get', handler: (ctx) => ({ body: ctx.body === undefined ? 'none' : ctx.body }) },
    ),
  );
  return app;
}

async function post(app: App, payload: string, headers: Record<string, string> = JSON_HEADERS) {
  return app.inject({ method: 'POST', url: '/echo', headers, payload });
}

describe('JSON bodies', () => {
  test('a JSON body is parsed into ctx.body before the handler runs', async () => {
    const app = echoApp();
    const res = await post(app, '{"title":"Dune","tags":["sf"],"n":1.5}');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { body: { title: 'Dune', tags: ['sf'], n: 1.5 } });
  });

  test('JSON media types with a UTF-8 charset or a +json suffix are accepted', async () => {
    const app = echoApp();
    for (const type of [
      'application/json; charset=utf-8',
      'application/JSON',
      'application/merge-patch+json',
      'application/json;charset="UTF-8"',
    ]) {
      const res = await post(app, '[1]', { 'content-type': type });
      assert.equal(res.statusCode, 200, type);
      assert.deepEqual(res.json(), { body: [1] });
    }
  });

  test('a request without a body leaves ctx.body undefined', async () => {
    const app = echoApp();
    assert.deepEqual((await app.inject({ method: 'POST', url: '/echo' })).json(), { body: 'none' });
    assert.deepEqual((await post(app, '', { 'content-type': 'text/plain' })).json(), { body: 'none' });
  });

  test('GET routes never read a body', async () => {
    const app = echoApp();
    const res = await app.inject({ method: 'GET', url: '/get', headers: { 'content-type': 'text/plain' }, payload: 'not json' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { body: 'none' });
  });

  test('a body that is not JSON is a 415 problem', async () => {
    const app = echoApp();
    for (const headers of [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json; charset=latin1' },
      { 'content-type': 'application/jsonp' },
      {},
    ]) {
      const res = await post(app, '{"a":1}', headers);
      assert.equal(res.statusCode, 415, JSON.stringify(headers));
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.headers['accept-post'], 'application/json');
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  test('malformed JSON is a 400 problem', async () => {
    const app = echoApp();
    for (const payload of ['{"a":', '{a:1}', "{'a':1}", 'undefined', '{"a":1}x']) {
      const res = await post(app, payload);
      assert.equal(res.statusCode, 400, payload);
      assert.equal(res.json().code, 'MALFORMED_JSON');
      assert.equal(res.json().detail, 'the body is not valid JSON');
    }
  });

  test('__proto__ and constructor.prototype keys are a 400 problem and pollute nothing', async () => {
    const app = echoApp();
    for (const payload of [
      '{"__proto__":{"polluted":"yes"}}',
      '{"a":{"b":{"__proto__":{"polluted":"yes"}}}}',
      '[{"__proto__":{"polluted":"yes"}}]',
      '{"constructor":{"prototype":{"polluted":"yes"}}}',
      '{"\\u005f_proto__":{"polluted":"yes"}}',
    ]) {
      const res = await post(app, payload);
      assert.equal(res.statusCode, 400, payload);
      assert.equal(res.json().code, 'FORBIDDEN_KEY', payload);
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  });

  test('keys that only look dangerous are kept', async () => {
    const app = echoApp();
    const res = await post(app, '{"constructor":"x","proto":1,"prototype":{"a":1}}');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { body: { constructor: 'x', proto: 1, prototype: { a: 1 } } });
  });

  test('the body is read after the middlewares, so a middleware rejecting the request answers first', async () => {
    const { app } = testApp();
    let handled = false;
    app.registerController(
      controller({
        method: 'POST',
        path: '/guarded',
        middlewares: [
          () => {
            throw KError.unauthorized();
          },
        ],
        handler: () => {
          handled = true;
        },
      }),
    );
    const res = await app.inject({ method: 'POST', url: '/guarded', headers: JSON_HEADERS, payload: '{broken' });
    assert.equal(res.statusCode, 401);
    assert.equal(handled, false);
  });
});

describe('body size limit', () => {
  test('the default limit is 1 MiB: one byte more is a 413 problem', async () => {
    const app = echoApp();
    const json = (size: number) => `"${'a'.repeat(size - 2)}"`;
    assert.equal((await post(app, json(1_048_576))).statusCode, 200);
    const res = await post(app, json(1_048_577));
    assert.equal(res.statusCode, 413);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
    assert.equal(res.json().detail, 'the body exceeds the limit of 1048576 bytes');
  });

  test('limits.bodyBytes and a route bodyLimit change the limit', async () => {
    const app = echoApp({ limits: { bodyBytes: 64 } });
    assert.equal((await post(app, JSON.stringify({ a: 'x'.repeat(40) }))).statusCode, 200);
    assert.equal((await post(app, JSON.stringify({ a: 'x'.repeat(80) }))).statusCode, 413);
    const put = (payload: string) => app.inject({ method: 'PUT', url: '/small', headers: JSON_HEADERS, payload });
    assert.equal((await put('{"a":"123456789"}')).statusCode, 413);
    assert.equal((await put('{"a":1}')).statusCode, 200);
  });

  test('a chunked body without Content-Length is counted while streaming: 413 before it ends', async (t) => {
    const app = echoApp({ limits: { bodyBytes: 4096 } });
    const port = await serve(t, app);
    const socket = await openSocket(port);
    const response = readUntilClose(socket);
    const chunk = `400\r\n${'a'.repeat(0x400)}\r\n`;
    socket.write(`POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    // 8 KiB sent, the terminating chunk never: only counting while streaming can answer
    for (let i = 0; i < 8; i++) socket.write(chunk);
    const text = await response;
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.match(text, /content-type: application\/problem\+json/i);
    assert.match(text, /connection: close/i);
    assert.match(text, /"code":"PAYLOAD_TOO_LARGE"/);
    const after = await httpRequest(port, '/echo', { method: 'POST', headers: JSON_HEADERS, body: '{"still":"serving"}' });
    assert.equal(after.status, 200);
    assert.deepEqual(JSON.parse(after.body), { body: { still: 'serving' } });
  });

  test('a declared Content-Length above the limit is refused without reading the body', async (t) => {
    const app = echoApp({ limits: { bodyBytes: 1024 } });
    const port = await serve(t, app);
    const socket = await openSocket(port);
    const response = readUntilClose(socket);
    socket.write('POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{');
    const text = await response;
    assert.match(text, /^HTTP\/1\.1 413 /);
  });
});
