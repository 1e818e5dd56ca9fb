import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/app/app.ts';
import { bodyApp } from '../app/bodies/harness.ts';
import { httpRequest, openSocket, readUntilClose } from '../helpers/http.ts';

/**
 * The hostile-HTTP corpus for the body parsers other than JSON: malformed
 * multipart boundaries and bodies, huge field and part counts, forms built to
 * pollute prototypes, and slow uploads that never finish. Each is sent over a
 * raw socket (asking to close the connection after the answer) and gets its
 * exact 4xx as a problem — never a 5xx, never a hang — and the server keeps serving.
 */

const BODY_LIMIT = 256 * 1024;

function post(path: string, type: string, body: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: ${type}\r\n${extra}Content-Length: ${Buffer.byteLength(body, 'latin1')}\r\n\r\n${body}`;
}

const mp = (boundary = 'B') => `multipart/form-data; boundary=${boundary}`;
const field = (name: string, value: string, boundary = 'B') =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = (name: string, filename: string, content: string, boundary = 'B') =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n`;
const close = (boundary = 'B') => `--${boundary}--\r\n`;
const many = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i)).join('');

interface Case {
  name: string;
  /** The request, sent at once; or, with `trickle`, its start, then one byte of `trickle` every 50 ms until the server answers. */
  request: string;
  trickle?: string;
  status: number;
  code?: string;
}

const CORPUS: Case[] = [
  // malformed boundaries
  { name: 'multipart without a boundary', request: post('/multipart', 'multipart/form-data', field('a', '1') + close()), status: 400 },
  { name: 'an empty boundary', request: post('/multipart', mp('""'), field('a', '1', '') + close('')), status: 400 },
  {
    name: 'a boundary of 71 characters',
    request: post('/multipart', mp('b'.repeat(71)), field('a', '1', 'b'.repeat(71)) + close('b'.repeat(71))),
    status: 400,
  },
  { name: 'an 8 KiB boundary', request: post('/multipart', mp('b'.repeat(8192)), 'x'), status: 400 },
  { name: 'a boundary with characters RFC 2046 forbids', request: post('/multipart', mp('"{a}"'), field('a', '1', '{a}')), status: 400 },
  // not even a Content-Type (RFC 9110 §8.3.1): refused as every body kind refuses one
  {
    name: 'a boundary that is neither a token nor a quoted string',
    request: post('/multipart', mp('{a}'), field('a', '1', '{a}')),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  { name: 'a boundary ending in a space', request: post('/multipart', mp('"ab "'), field('a', '1', 'ab ')), status: 400 },
  {
    name: 'an unterminated quoted boundary',
    request: post('/multipart', 'multipart/form-data; boundary="B', field('a', '1') + close()),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'a body with another boundary than declared',
    request: post('/multipart', mp('B'), field('a', '1', 'C') + close('C')),
    status: 400,
  },
  { name: 'a body without its close delimiter', request: post('/multipart', mp(), field('a', '1')), status: 400 },
  { name: 'a body cut inside a file', request: post('/multipart', mp(), file('f', 'f.bin', 'x'.repeat(1000)).slice(0, 500)), status: 400 },
  {
    name: 'a body with LF-only line endings',
    request: post('/multipart', mp(), '--B\nContent-Disposition: form-data; name="a"\n\n1\n--B--\n'),
    status: 400,
  },
  { name: 'a body that is all preamble', request: post('/multipart', mp(), 'x'.repeat(100_000)), status: 400 },
  {
    name: 'a part without a name',
    request: post('/multipart', mp(), '--B\r\nContent-Disposition: form-data\r\n\r\n1\r\n' + close()),
    status: 400,
  },
  {
    name: 'a buffered multipart field named __proto__',
    request: post('/buffered', mp(), field('__proto__', '{"polluted":"yes"}') + close()),
    status: 400,
    code: 'FORBIDDEN_KEY',
  },
  // huge counts
  {
    name: '5000 tiny fields',
    request: post('/multipart', mp(), many(5000, (i) => field(`a${i}`, 'v')) + close()),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: '5000 parts without Content-Disposition',
    request: post('/multipart', mp(), many(5000, () => '--B\r\nX-A: b\r\n\r\nv\r\n') + close()),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: '11 files',
    request: post('/multipart', mp(), many(11, (i) => file(`f${i}`, `${i}.bin`, 'x')) + close()),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: 'a field of 64 KiB and one byte',
    request: post('/multipart', mp(), field('a', 'v'.repeat(64 * 1024 + 1)) + close()),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: 'a multipart body above the body limit',
    request: post('/multipart', mp(), file('f', 'f.bin', 'x'.repeat(BODY_LIMIT)) + close()),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: 'a form of 20000 pairs',
    request: post(
      '/form',
      'application/x-www-form-urlencoded',
      many(20_000, (i) => `k${i}=v&`),
    ),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  // forms built to pollute
  {
    name: 'a form with __proto__',
    request: post('/form', 'application/x-www-form-urlencoded', 'a=1&__proto__[polluted]=yes'),
    status: 400,
    code: 'FORBIDDEN_KEY',
  },
  {
    name: 'a form with constructor[prototype]',
    request: post('/form', 'application/x-www-form-urlencoded', 'constructor[prototype][polluted]=yes'),
    status: 400,
    code: 'FORBIDDEN_KEY',
  },
  { name: 'a form in UTF-16', request: post('/form', 'application/x-www-form-urlencoded; charset=utf-16', 'a=1'), status: 415 },
  { name: 'text in an unknown charset', request: post('/text', 'text/plain; charset=klingon', 'a'), status: 415 },
  { name: 'text that is not valid UTF-8', request: post('/text', 'text/plain', 'a\xc3\x28'), status: 400 },
  // slow uploads that never finish: cut by timeouts.requestMs
  {
    name: 'a multipart body trickling in, never finished',
    request: post('/multipart', mp(), file('f', 'f.bin', 'x'.repeat(100))).replace(/Content-Length: \d+/, 'Content-Length: 100000'),
    trickle: 'x',
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
  {
    name: 'a chunked multipart body trickling in, never finished',
    request: `POST /multipart HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: ${mp()}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    trickle: '1\r\nx\r\n',
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
  {
    name: 'a form trickling in, never finished',
    request: post('/form', 'application/x-www-form-urlencoded', 'a=').replace(/Content-Length: \d+/, 'Content-Length: 100000'),
    trickle: 'a',
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
  {
    name: 'a stream body trickling in, never finished',
    request: post('/stream', 'application/octet-stream', '').replace(/Content-Length: \d+/, 'Content-Length: 100000'),
    trickle: 'a',
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
  {
    name: 'a raw body trickling in, never finished',
    request: post('/raw', 'application/octet-stream', '').replace(/Content-Length: \d+/, 'Content-Length: 100000'),
    trickle: 'a',
    status: 408,
    code: 'REQUEST_TIMEOUT',
  },
];

/** What must be answered normally, though it looks odd: the corpus's control group. */
const ACCEPTED: Case[] = [
  {
    name: 'a boundary of 70 characters',
    request: post('/multipart', mp('b'.repeat(70)), field('a', '1', 'b'.repeat(70)) + close('b'.repeat(70))),
    status: 200,
  },
  {
    name: 'a preamble and an epilogue',
    request: post('/multipart', mp(), `preamble\r\n${field('a', '1')}${close()}epilogue`),
    status: 200,
  },
  {
    name: '5000 header lines in one part (only the first are kept)',
    request: post('/multipart', mp(), `--B\r\nContent-Disposition: form-data; name="a"\r\n${'X-A: b\r\n'.repeat(5000)}\r\n1\r\n${close()}`),
    status: 200,
  },
  {
    name: 'a form of 20000 empty pieces',
    request: post('/form', 'application/x-www-form-urlencoded', `a=1${'&'.repeat(20_000)}`),
    status: 200,
  },
  {
    name: 'a field named __proto__ in a streamed multipart body (no object is built from names)',
    request: post('/multipart', mp(), field('__proto__', 'x') + close()),
    status: 200,
  },
];

/** A slow upload that finishes well within `timeouts.requestMs`: sent in pieces, 20 ms apart. */
const SLOW_BUT_COMPLETE = post('/multipart', mp(), field('a', '1') + file('f', 'f.bin', 'x'.repeat(2000)) + close());

describe('hostile bodies over raw sockets', () => {
  let app: App;
  let port: number;
  let listening: Promise<void>;

  before(async () => {
    const limit = BODY_LIMIT;
    app = bodyApp(
      [
        { path: '/multipart', options: { kind: 'multipart', limit } },
        { path: '/buffered', options: { kind: 'multipart', limit, multipart: { buffer: true } } },
        { path: '/form', options: { kind: 'form', limit } },
        { path: '/text', options: { kind: 'text', limit } },
        { path: '/raw', options: { kind: 'raw', limit } },
        { path: '/stream', options: { kind: 'stream', limit } },
      ],
      { limits: { headerBytes: 16 * 1024, bodyBytes: limit }, timeouts: { headersMs: 300, requestMs: 1000 } },
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
      const { status, head, body } = await exchange(port, c, 15_000);
      assert.equal(status, c.status, `${c.name}: got ${head}\n${body.slice(0, 300)}`);
      assert.match(head, /\r\ncontent-type: application\/problem\+json\r\n/i);
      const problem = JSON.parse(body) as Record<string, unknown>;
      assert.equal(problem['status'], c.status);
      for (const field of ['type', 'title', 'detail', 'code']) assert.equal(typeof problem[field], 'string', field);
      if (c.code !== undefined) assert.equal(problem['code'], c.code);
      assert.equal((await httpRequest(port, '/raw', { method: 'POST', body: 'ok' })).status, 200);
    });
  }

  for (const c of ACCEPTED) {
    test(`${c.name}: answered normally`, async () => {
      const { status, head, body } = await exchange(port, c, 15_000);
      assert.equal(status, c.status, `${head}\n${body.slice(0, 300)}`);
    });
  }

  test('a slow upload that finishes within the request timeout is answered normally', async () => {
    const request = Buffer.from(SLOW_BUT_COMPLETE, 'latin1');
    const socket = await openSocket(port);
    socket.on('error', () => {});
    const response = readUntilClose(socket);
    const pieces = 10;
    const size = Math.ceil(request.length / pieces);
    for (let i = 0; i < request.length; i += size) {
      socket.write(request.subarray(i, i + size));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const text = await response;
    assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 300));
    assert.match(text, /"size":2000/);
  });
});

/**
 * Sends a case on a fresh connection and reads until the server closes it
 * (or `timeoutMs` passes: a failure). A trickling case keeps sending one piece
 * every 50 ms until then.
 */
async function exchange(port: number, c: Case, timeoutMs: number): Promise<{ status: number; head: string; body: string }> {
  const socket = await openSocket(port);
  socket.on('error', () => {});
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const text = readUntilClose(socket);
  socket.write(Buffer.from(c.request, 'latin1'));
  let drip: NodeJS.Timeout | undefined;
  if (c.trickle !== undefined) {
    const piece = Buffer.from(c.trickle, 'latin1');
    drip = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(piece);
    }, 50);
  }
  const response = await text;
  clearTimeout(timer);
  clearInterval(drip);
  const split = response.indexOf('\r\n\r\n');
  const head = split === -1 ? response : response.slice(0, split);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, head, body: split === -1 ? '' : response.slice(split + 4) };
}
