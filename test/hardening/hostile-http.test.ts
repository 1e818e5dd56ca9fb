import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/app/app.ts';
import { controller, testApp } from '../helpers/app.ts';
import { httpRequest, openSocket, readUntilClose } from '../helpers/http.ts';

/**
 * A corpus of hostile HTTP/1.1 sent over raw sockets: every one gets its exact
 * 4xx (never a 5xx, never a hang), as a problem, and the server keeps serving.
 */

const HEAD_LIMIT = 4096;
const JSON_TYPE = 'Content-Type: application/json\r\n';
const POST = `POST /echo HTTP/1.1\r\nHost: localhost\r\n${JSON_TYPE}`;

interface Case {
  name: string;
  request: string;
  status: number;
  code?: string;
}

const CORPUS: Case[] = [
  { name: 'bare CR in the request line', request: 'GET /ok HTTP/1.1\rHost: localhost\r\n\r\n', status: 400 },
  { name: 'bare CR in a header value', request: 'GET /ok HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n', status: 400 },
  { name: 'LF-only line endings', request: 'GET /ok HTTP/1.1\nHost: localhost\n\n', status: 400 },
  { name: 'space before the colon', request: 'GET /ok HTTP/1.1\r\nHost : localhost\r\n\r\n', status: 400 },
  {
    name: 'space before the colon of Transfer-Encoding',
    request: `${POST}Transfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    status: 400,
  },
  { name: 'NUL in a header value', request: 'GET /ok HTTP/1.1\r\nHost: localhost\r\nX-A: a\0b\r\n\r\n', status: 400 },
  {
    name: 'obs-fold (a header continued on the next line)',
    request: 'GET /ok HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n b\r\n\r\n',
    status: 400,
  },
  {
    name: 'Content-Length together with Transfer-Encoding',
    request: `${POST}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    status: 400,
  },
  { name: 'two different Content-Lengths', request: `${POST}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x`, status: 400 },
  { name: 'two equal Content-Lengths', request: `${POST}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}`, status: 400 },
  { name: 'a Content-Length list', request: `${POST}Content-Length: 2, 2\r\n\r\n{}`, status: 400 },
  { name: 'a negative Content-Length', request: `${POST}Content-Length: -1\r\n\r\n`, status: 400 },
  { name: 'a signed Content-Length', request: `${POST}Content-Length: +2\r\n\r\n{}`, status: 400 },
  { name: 'a Content-Length past 2^64', request: `${POST}Content-Length: 99999999999999999999999\r\n\r\n`, status: 400 },
  {
    name: 'Transfer-Encoding given twice',
    request: `${POST}Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    status: 400,
  },
  {
    name: 'chunked not being the last coding',
    request: `${POST}Transfer-Encoding: chunked, gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    status: 400,
  },
  { name: 'an unknown transfer coding', request: `${POST}Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, status: 400 },
  { name: 'a chunk size that is not hex', request: `${POST}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, status: 400 },
  { name: 'a chunk size past 2^64', request: `${POST}Transfer-Encoding: chunked\r\n\r\n${'f'.repeat(20)}\r\n{}\r\n0\r\n\r\n`, status: 400 },
  { name: 'a chunk without its CRLF', request: `${POST}Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n`, status: 400 },
  { name: 'a chunk extension with a bare CR', request: `${POST}Transfer-Encoding: chunked\r\n\r\n2;a\rb\r\n{}\r\n0\r\n\r\n`, status: 400 },
  {
    name: 'an unterminated quoted chunk extension',
    request: `${POST}Transfer-Encoding: chunked\r\n\r\n2;a="b\r\n{}\r\n0\r\n\r\n`,
    status: 400,
  },
  {
    name: 'chunk extensions without end',
    request: `${POST}Transfer-Encoding: chunked\r\n\r\n2;${'a=b;'.repeat(5000)}\r\n{}\r\n0\r\n\r\n`,
    status: 400,
  },
  { name: 'an unknown method', request: 'FOO /ok HTTP/1.1\r\nHost: localhost\r\n\r\n', status: 400 },
  { name: 'an unknown HTTP version', request: 'GET /ok HTTP/9.9\r\nHost: localhost\r\n\r\n', status: 400 },
  { name: 'a target without a slash', request: 'GET ok HTTP/1.1\r\nHost: localhost\r\n\r\n', status: 400 },
  { name: 'a control character in the target', request: 'GET /o\x01k HTTP/1.1\r\nHost: localhost\r\n\r\n', status: 400 },
  { name: 'raw non-ASCII in the target', request: 'GET /\xc3\xa9 HTTP/1.1\r\nHost: localhost\r\n\r\n', status: 400 },
  { name: 'no Host header', request: 'GET /ok HTTP/1.1\r\n\r\n', status: 400, code: 'BAD_REQUEST' },
  { name: 'two Host headers', request: 'GET /ok HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n', status: 400, code: 'BAD_REQUEST' },
  {
    name: 'a header above the head limit',
    request: `GET /ok HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(HEAD_LIMIT)}\r\n\r\n`,
    status: 431,
    code: 'HEADERS_TOO_LARGE',
  },
  {
    name: 'many small headers',
    request: `GET /ok HTTP/1.1\r\nHost: localhost\r\n${'X: y\r\n'.repeat(2000)}\r\n`,
    status: 431,
    code: 'HEADERS_TOO_LARGE',
  },
  {
    name: 'a target above the head limit',
    request: `GET /${'a'.repeat(HEAD_LIMIT)} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    status: 414,
    code: 'URI_TOO_LONG',
  },
  { name: 'a 1 MiB path', request: `GET /${'a'.repeat(1 << 20)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, status: 414, code: 'URI_TOO_LONG' },
  {
    name: 'a body shorter than its Content-Length',
    request: `${POST}Content-Length: 100\r\n\r\n{"a":`,
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
  {
    name: 'a chunked body that never ends',
    request: `${POST}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n`,
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
  { name: 'a head that never ends', request: 'GET /ok HTTP/1.1\r\nHost: localhost\r\n', status: 408, code: 'REQUEST_TIMEOUT' },
  {
    name: 'a body above the limit',
    request: `${POST}Content-Length: 5000\r\n\r\n${'a'.repeat(5000)}`,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
];

/** What must be answered normally, though it looks odd: the corpus's control group. */
const ACCEPTED: Case[] = [
  {
    name: 'chunk extensions (valid ones are ignored)',
    request: `${POST}Transfer-Encoding: chunked\r\n\r\n2;name="quoted value";flag\r\n{}\r\n0\r\n\r\n`,
    status: 200,
  },
  { name: 'a tab before a header value', request: `${POST}Transfer-Encoding:\tchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, status: 200 },
  {
    name: 'a trailer after the last chunk',
    request: `${POST}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n`,
    status: 200,
  },
  { name: 'HTTP/1.0 without Host', request: 'GET /ok HTTP/1.0\r\n\r\n', status: 200 },
];

describe('hostile HTTP/1.1 over raw sockets', () => {
  let app: App;
  let port: number;
  let listening: Promise<void>;

  before(async () => {
    ({ app } = testApp({
      limits: { headerBytes: HEAD_LIMIT, bodyBytes: 1024 },
      timeouts: { headersMs: 300, requestMs: 500 },
      logging: { level: 'silent' },
    }));
    app.registerController(
      controller(
        { method: 'GET', path: '/ok', handler: () => ({ ok: true }) },
        { method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) },
      ),
    );
    listening = app.listen();
    port = (await app.ready()).port;
  });

  after(async () => {
    await app.close();
    await listening;
  });

  for (const c of CORPUS) {
    test(`${c.name}: ${c.status}, a problem, and the server keeps serving`, async () => {
      const started = performance.now();
      const { status, head, body } = await exchange(port, c.request, 10_000);
      assert.equal(status, c.status, `${c.name}: got ${head}`);
      assert.match(head, /\r\ncontent-type: application\/problem\+json\r\n/i);
      assert.match(head, /\r\nconnection: close\r\n/i);
      const problem = JSON.parse(body) as Record<string, unknown>;
      assert.equal(problem['status'], c.status);
      for (const field of ['type', 'title', 'detail', 'instance', 'code']) assert.equal(typeof problem[field], 'string', field);
      if (c.code !== undefined) assert.equal(problem['code'], c.code);
      // the timeouts are 300 / 500 ms; the rest is answered at once (the bounds leave room for a busy machine)
      assert.ok(performance.now() - started < (c.status === 408 ? 5_000 : 3_000), `${c.name} took too long`);
      assert.equal((await httpRequest(port, '/ok')).status, 200);
    });
  }

  for (const c of ACCEPTED) {
    test(`${c.name}: answered normally`, async () => {
      const request = c.request.replace('\r\n', '\r\nConnection: close\r\n');
      const { status, head } = await exchange(port, request, 10_000);
      assert.equal(status, c.status, head);
      assert.equal((await httpRequest(port, '/ok')).status, 200);
    });
  }
});

/** Sends raw bytes on a fresh connection and reads until the server closes it (or `timeoutMs` passes: a failure). */
async function exchange(port: number, request: string, timeoutMs: number): Promise<{ status: number; head: string; body: string }> {
  const socket = await openSocket(port);
  socket.on('error', () => {});
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const text = readUntilClose(socket);
  socket.write(Buffer.from(request, 'latin1'));
  const response = await text;
  clearTimeout(timer);
  const split = response.indexOf('\r\n\r\n');
  const head = split === -1 ? response : response.slice(0, split + 2);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(response)?.[1] ?? 0);
  return { status, head, body: split === -1 ? '' : response.slice(split + 4) };
}
