import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { readBody } from '../../../src/app/bodies/index.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { serve } from '../../helpers/app.ts';
import { openSocket, readUntilClose } from '../../helpers/http.ts';
import { bodyApp, digest, sha256 } from './harness.ts';

const LIMIT = 256 * 1024;

describe('stream bodies', () => {
  test('the stream gives exactly the bytes sent, chunked or not', async (t) => {
    const app = bodyApp([{ path: '/stream', options: { kind: 'stream', limit: LIMIT } }]);
    const port = await serve(t, app);
    const payload = Buffer.alloc(LIMIT, 0);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) & 0xff;
    for (const chunked of [false, true]) {
      const text = await exchange(port, payload, { chunked, type: 'application/octet-stream' });
      assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 200));
      assert.deepEqual(JSON.parse(bodyOf(text)), { stream: { size: payload.length, sha256: sha256(payload) } });
    }
  });

  test('a request without a body gives a stream that ends at once', async () => {
    const app = bodyApp([{ path: '/stream', options: { kind: 'stream', limit: LIMIT } }]);
    const res = await app.inject({ method: 'POST', url: '/stream' });
    assert.deepEqual(res.json(), { stream: { size: 0, sha256: sha256('') } });
  });

  test('a declared Content-Length over the limit is a 413 before the stream is handed over', async () => {
    let handed = false;
    const app = bodyApp([
      {
        path: '/stream',
        options: { kind: 'stream', limit: 10 },
        consume: () => {
          handed = true;
        },
      },
    ]);
    const res = await app.inject({ method: 'POST', url: '/stream', payload: 'x'.repeat(11) });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
    assert.equal(handed, false);
  });

  test('a chunked body past the limit errors the stream with a 413 KError: the problem is sent, the connection closed', async (t) => {
    const app = bodyApp([{ path: '/stream', options: { kind: 'stream', limit: 4096 } }]);
    const port = await serve(t, app);
    const text = await exchange(port, Buffer.alloc(64 * 1024, 1), { chunked: true });
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.match(text, /"code":"PAYLOAD_TOO_LARGE"/);
  });

  test('mediaTypes narrows the accepted types: 415 for the others, before anything is read', async () => {
    const app = bodyApp([{ path: '/stream', options: { kind: 'stream', limit: LIMIT, mediaTypes: ['video/*'] } }]);
    assert.equal(
      (await app.inject({ method: 'POST', url: '/stream', headers: { 'content-type': 'video/mp4' }, payload: 'x' })).statusCode,
      200,
    );
    const res = await app.inject({ method: 'POST', url: '/stream', headers: { 'content-type': 'audio/ogg' }, payload: 'x' });
    assert.equal(res.statusCode, 415);
    assert.equal(res.headers['accept-post'], 'video/*');
  });

  test('a handler that never reads the stream, or destroys it, still answers; the connection closes', async (t) => {
    const app = bodyApp([
      { path: '/ignore', options: { kind: 'stream', limit: LIMIT }, consume: () => ({ ignored: true }) },
      {
        path: '/destroy',
        options: { kind: 'stream', limit: LIMIT },
        consume: async (body) => {
          const stream = body as Readable;
          for await (const _ of stream) break;
          return { destroyed: stream.destroyed };
        },
      },
    ]);
    const port = await serve(t, app);
    const ignored = await exchange(port, Buffer.alloc(LIMIT, 2), { path: '/ignore' });
    assert.match(ignored, /^HTTP\/1\.1 200 /);
    assert.deepEqual(JSON.parse(bodyOf(ignored)), { ignored: true });
    const destroyed = await exchange(port, Buffer.alloc(LIMIT, 2), { path: '/destroy' });
    assert.match(destroyed, /^HTTP\/1\.1 200 /);
    assert.deepEqual(JSON.parse(bodyOf(destroyed)), { destroyed: true });
  });

  test('a client that aborts mid-body errors the stream with a 400 KError', async (t) => {
    const errors = Promise.withResolvers<unknown>();
    const server = createServer((req: IncomingMessage) => {
      readBody(req, { kind: 'stream', limit: LIMIT })
        .then((body) => digest(body as Readable))
        .then(
          () => errors.resolve(undefined),
          (error: unknown) => errors.resolve(error),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const socket = await openSocket((server.address() as AddressInfo).port);
    socket.on('error', () => {});
    socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n${'a'.repeat(100)}`);
    await new Promise((resolve) => setImmediate(resolve));
    socket.destroy();
    const error = await errors.promise;
    assert.ok(error instanceof KError, String(error));
    assert.equal(error.status, 400);
  });

  test('an aborted signal refuses the body with a 503 before reading it', async () => {
    const req = { headers: { 'content-length': '5' }, on() {}, off() {}, pause() {}, resume() {} } as unknown as IncomingMessage;
    const body = (await readBody(req, { kind: 'stream', limit: 10 }, AbortSignal.abort(new Error('shutting down')))) as Readable;
    await assert.rejects(digest(body), (error: unknown) => error instanceof KError && error.status === 503);
  });
});

/** Sends a POST with `payload` on a fresh connection (`Connection: close`) and reads the whole response. */
async function exchange(port: number, payload: Buffer, options: { chunked?: boolean; type?: string; path?: string } = {}): Promise<string> {
  const socket = await openSocket(port);
  socket.on('error', () => {});
  const timer = setTimeout(() => socket.destroy(), 10_000);
  const response = readUntilClose(socket);
  const length = options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${payload.length}`;
  const type = options.type === undefined ? '' : `Content-Type: ${options.type}\r\n`;
  socket.write(`POST ${options.path ?? '/stream'} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${type}${length}\r\n\r\n`);
  const piece = 16 * 1024;
  for (let i = 0; i < payload.length && !socket.destroyed; i += piece) {
    const slice = payload.subarray(i, i + piece);
    const ok = socket.write(
      options.chunked ? Buffer.concat([Buffer.from(`${slice.length.toString(16)}\r\n`), slice, Buffer.from('\r\n')]) : slice,
    );
    if (!ok) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
  }
  if (options.chunked && !socket.destroyed) socket.write('0\r\n\r\n');
  const text = await response;
  clearTimeout(timer);
  return text;
}

function bodyOf(response: string): string {
  const head = response.indexOf('\r\n\r\n');
  return response.slice(head + 4);
}
