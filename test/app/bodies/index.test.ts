import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isUtf8Charset, mediaTypeOf } from '../../../src/app/bodies/common.ts';
import { BODY_KINDS, BODY_MEDIA_TYPES, type BodyKind, type BodyOptions, bodyMediaTypes, readBody } from '../../../src/app/bodies/index.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { flood } from '../../helpers/http.ts';
import { bodyApp, MULTIPART_TYPE, multipart } from './harness.ts';

const LIMIT = 1024;

/** For each kind: a body of `size` bytes it accepts, with its media type, and a media type it refuses (none for `raw` and `stream`). */
const KINDS: Record<BodyKind, { type: string; body: (size: number) => Buffer; refused?: string }> = {
  json: { type: 'application/json', body: (size) => Buffer.from(JSON.stringify('a'.repeat(size - 2))), refused: 'text/plain' },
  text: { type: 'text/plain', body: (size) => Buffer.alloc(size, 'a'), refused: 'application/json' },
  raw: { type: 'application/octet-stream', body: (size) => Buffer.alloc(size, 0xff) },
  form: {
    type: 'application/x-www-form-urlencoded',
    body: (size) => Buffer.from(`a=${'b'.repeat(size - 2)}`),
    refused: 'application/json',
  },
  multipart: {
    type: MULTIPART_TYPE,
    body: (size) => {
      const empty = multipart([{ name: 'f', filename: 'f.bin', content: '' }]);
      return multipart([{ name: 'f', filename: 'f.bin', content: Buffer.alloc(size - empty.length, 1) }]);
    },
    refused: 'application/x-www-form-urlencoded',
  },
  stream: { type: 'application/octet-stream', body: (size) => Buffer.alloc(size, 0x33) },
};

const app = bodyApp(BODY_KINDS.map((kind) => ({ path: `/${kind}`, options: { kind, limit: LIMIT } })));

describe('readBody, every kind', () => {
  let port: number;
  let listening: Promise<void>;
  before(async () => {
    listening = app.listen();
    port = (await app.ready()).port;
  });
  after(async () => {
    await app.close();
    await listening;
  });

  for (const kind of BODY_KINDS) {
    const spec = KINDS[kind];
    test(`${kind}: a body of exactly the limit is read; one byte more is a 413 with Connection: close`, async () => {
      const ok = await app.inject({ method: 'POST', url: `/${kind}`, headers: { 'content-type': spec.type }, payload: spec.body(LIMIT) });
      assert.equal(ok.statusCode, 200, ok.body);
      const over = await app.inject({
        method: 'POST',
        url: `/${kind}`,
        headers: { 'content-type': spec.type },
        payload: spec.body(LIMIT + 1),
      });
      assert.equal(over.statusCode, 413);
      assert.equal(over.json().code, 'PAYLOAD_TOO_LARGE');
      assert.equal(over.headers['connection'], 'close');
    });

    test(`${kind}: a chunked body past the limit is a 413, counted while streaming`, async () => {
      const head = `POST /${kind} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${spec.type}\r\nTransfer-Encoding: chunked\r\n\r\n`;
      const { response } = await flood(port, head, { bytes: 1024 * 1024, chunked: true });
      assert.match(response, /^HTTP\/1\.1 413 /);
      assert.match(response, /"code":"PAYLOAD_TOO_LARGE"/);
    });

    if (spec.refused !== undefined) {
      const refused = spec.refused;
      test(`${kind}: ${refused} is a 415 naming ${BODY_MEDIA_TYPES[kind].split('/')[0]}/… in Accept-Post`, async () => {
        const res = await app.inject({ method: 'POST', url: `/${kind}`, headers: { 'content-type': refused }, payload: spec.body(500) });
        assert.equal(res.statusCode, 415);
        assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
        const acceptPost = String(res.headers['accept-post']);
        assert.ok(acceptPost.startsWith(BODY_MEDIA_TYPES[kind].split('/')[0] ?? ''), acceptPost);
      });
    }
  }

  test('an unknown kind is a TypeError (the route registration should have refused it)', async () => {
    const req = { headers: {} } as IncomingMessage;
    await assert.rejects(readBody(req, { kind: 'xml' as BodyKind, limit: 1 }), TypeError);
  });

  test('an aborted signal refuses the body with a 503, whatever the kind', async () => {
    const req = {
      headers: { 'content-length': '2', 'content-type': 'application/json' },
      on() {},
      off() {},
      pause() {},
      resume() {},
    } as unknown as IncomingMessage;
    const signal = AbortSignal.abort(new Error('shutting down'));
    for (const kind of ['json', 'raw'] as const) {
      await assert.rejects(readBody(req, { kind, limit: 10 }, signal), (e: unknown) => e instanceof KError && e.status === 503);
    }
  });

  test('a request without a body: undefined for the value kinds, an empty iteration or stream for the streaming ones', async () => {
    const req = { headers: {} } as IncomingMessage;
    const read = (kind: BodyKind, extra: Partial<BodyOptions> = {}) => readBody(req, { kind, limit: 10, ...extra });
    for (const kind of ['json', 'text', 'raw', 'form'] as const) assert.equal(await read(kind), undefined, kind);
    const parts = (await read('multipart')) as AsyncIterableIterator<unknown>;
    assert.deepEqual(await parts.next(), { value: undefined, done: true });
    assert.deepEqual(await read('multipart', { multipart: { buffer: true } }), { fields: {}, files: [] });
    const stream = (await read('stream')) as Readable;
    assert.deepEqual(await stream.toArray(), []);
  });
});

describe('media types', () => {
  test('BODY_MEDIA_TYPES names one media type per kind', () => {
    assert.deepEqual(BODY_MEDIA_TYPES, {
      json: 'application/json',
      text: 'text/plain',
      raw: 'application/octet-stream',
      form: 'application/x-www-form-urlencoded',
      multipart: 'multipart/form-data',
      stream: 'application/octet-stream',
    });
    assert.deepEqual(Object.keys(BODY_MEDIA_TYPES), [...BODY_KINDS]);
  });

  test('bodyMediaTypes: a raw or stream route documents the media types it narrowed to', () => {
    assert.deepEqual(bodyMediaTypes('raw', ['application/json']), ['application/json']);
    assert.deepEqual(bodyMediaTypes('stream', ['video/*', 'audio/*']), ['video/*', 'audio/*']);
    assert.deepEqual(bodyMediaTypes('raw', []), ['application/octet-stream']);
    assert.deepEqual(bodyMediaTypes('json', ['text/plain']), ['application/json']);
    assert.deepEqual(bodyMediaTypes('form'), ['application/x-www-form-urlencoded']);
  });

  test('mediaTypeOf reads the type in lower case and its parameters, unquoted, the first of a repeated one', () => {
    const parsed = mediaTypeOf('Multipart/Form-Data ; Boundary="a b;c\\"d" ; charset=UTF-8; boundary=second', ['multipart/form-data']);
    assert.equal(parsed.type, 'multipart/form-data');
    assert.deepEqual({ ...parsed.parameters }, { boundary: 'a b;c"d', charset: 'UTF-8' });
    assert.deepEqual({ ...mediaTypeOf('text/plain;', ['text/*']).parameters }, {});
  });

  test('mediaTypeOf: a missing or malformed Content-Type is a 415 whose detail says what is wrong', () => {
    const refused = (header: string | undefined, detail: RegExp) =>
      assert.throws(
        () => mediaTypeOf(header, ['text/*']),
        (e: unknown) => e instanceof KError && e.status === 415 && e.headers?.['Accept-Post'] === 'text/*' && detail.test(e.message),
        String(header),
      );
    for (const header of [undefined, '']) refused(header, /expected a body of type text\/\*, got 'none'/);
    for (const header of ['text', '/plain', 'text/', 'te xt/plain', 'text/pl ain', 'text/plain/x', 'text/plain, text/html']) {
      refused(header, /is not a media type \(type\/subtype\)$/);
    }
    for (const header of [
      'text/plain; charset',
      'text/plain; =x',
      'text/plain; charset=',
      'text/plain;charset="unterminated',
      'text/plain; a=b c',
    ]) {
      refused(header, /has a malformed parameter/);
    }
  });

  test('isUtf8Charset: no charset, utf-8 and utf8 in any case; nothing else', () => {
    for (const charset of [undefined, 'utf-8', 'UTF-8', 'utf8', 'Utf8']) assert.equal(isUtf8Charset(charset), true, charset);
    for (const charset of ['latin1', 'utf-16', 'utf-8 ', 'unicode-1-1-utf-8', '']) assert.equal(isUtf8Charset(charset), false, charset);
  });
});
