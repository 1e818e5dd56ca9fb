import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { invalidUtf8Offset } from '../../../src/app/bodies/utf8.ts';
import { controller, serve, testApp } from '../../helpers/app.ts';
import { openSocket, readUntilClose } from '../../helpers/http.ts';

const JSON_TYPE = { 'content-type': 'application/json' };
const TEXT_TYPE = { 'content-type': 'text/plain' };
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

function utf8App() {
  const { app } = testApp({ logging: { level: 'silent' } });
  app.registerController(
    controller(
      { method: 'POST', path: '/json', handler: (ctx) => ({ body: ctx.body ?? null }) },
      { method: 'POST', path: '/text', body: 'text', handler: (ctx) => ({ text: ctx.body ?? null }) },
      { method: 'POST', path: '/form', body: 'form', handler: (ctx) => ({ form: ctx.body ?? null }) },
    ),
  );
  return app;
}

const app = utf8App();
const post = (url: string, payload: string | Buffer, headers: Record<string, string>) =>
  app.inject({ method: 'POST', url, headers, payload });
const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

/** Ill-formed UTF-8 (RFC 3629) inside a JSON string, and the offset of its first byte. */
const INVALID: Record<string, [Buffer, number]> = {
  'an overlong encoding of "/"': [bytes('{"a":"', [0xc0, 0xaf], '"}'), 6],
  'an overlong three-byte encoding': [bytes('{"a":"', [0xe0, 0x80, 0xaf], '"}'), 6],
  'a lone continuation byte': [bytes('{"a":"x', [0x80], '"}'), 7],
  'a surrogate (U+D800) encoded in UTF-8': [bytes('{"a":"', [0xed, 0xa0, 0x80], '"}'), 6],
  'a code point past U+10FFFF': [bytes('{"a":"', [0xf4, 0x90, 0x80, 0x80], '"}'), 6],
  'a byte that is never UTF-8 (0xff)': [bytes('{"a":"', [0xff], '"}'), 6],
  'a sequence cut short at the end': [bytes('"ab', [0xe2, 0x82]), 3],
  'a lead byte followed by ASCII': [bytes('{"a":"', [0xc3], 'x"}'), 6],
};

describe('bodies that are not UTF-8', () => {
  for (const [what, [payload, offset]] of Object.entries(INVALID)) {
    test(`json: ${what} is a 400 INVALID_UTF8 naming byte ${offset}`, async () => {
      const res = await post('/json', payload, JSON_TYPE);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.json().code, 'INVALID_UTF8');
      assert.equal(res.json().title, 'Invalid UTF-8');
      assert.equal(res.json().type, 'urn:flotilla:problem:invalid-utf8');
      assert.equal(res.json().detail, `the body is not valid UTF-8 (byte offset ${offset})`);
    });
  }

  test('text: invalid UTF-8 is a 400 INVALID_UTF8, not U+FFFD', async () => {
    for (const [payload, offset] of Object.values(INVALID)) {
      const res = await post('/text', payload, TEXT_TYPE);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'INVALID_UTF8');
      assert.equal(res.json().detail, `the body is not valid UTF-8 (byte offset ${offset})`);
    }
  });

  test('form: raw bytes that are not UTF-8 are a 400 INVALID_UTF8', async () => {
    const res = await post('/form', bytes('a=1&b=', [0xc0, 0xaf]), FORM_TYPE);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'INVALID_UTF8');
    assert.equal(res.json().detail, 'the body is not valid UTF-8 (byte offset 6)');
  });

  test('form: percent-encoded bytes that are not UTF-8 are a 400 INVALID_UTF8 naming the field', async () => {
    const cases: Record<string, string> = {
      'a=1&b=%C0%AF': 'the value of form field 2, percent-decoded, is not valid UTF-8 (byte offset 0)',
      'x%80=1': 'the name of form field 1, percent-decoded, is not valid UTF-8 (byte offset 1)',
      'a=%ED%A0%80': 'the value of form field 1, percent-decoded, is not valid UTF-8 (byte offset 0)',
      'a=ok%E2%82': 'the value of form field 1, percent-decoded, is not valid UTF-8 (byte offset 2)',
      'a=%zz%FF': 'the value of form field 1, percent-decoded, is not valid UTF-8 (byte offset 3)',
      'a=%C3%A9%C3': 'the value of form field 1, percent-decoded, is not valid UTF-8 (byte offset 2)',
    };
    for (const [payload, detail] of Object.entries(cases)) {
      const res = await post('/form', payload, FORM_TYPE);
      assert.equal(res.statusCode, 400, payload);
      assert.equal(res.json().code, 'INVALID_UTF8', payload);
      assert.equal(res.json().detail, detail, payload);
    }
  });

  test('valid multi-byte UTF-8 is read as sent, by every kind', async () => {
    const value = 'é € 𝄞 日本 \u{10ffff} \ufffd';
    const json = await post('/json', Buffer.from(JSON.stringify({ value })), JSON_TYPE);
    assert.deepEqual(json.json(), { body: { value } });
    const text = await post('/text', Buffer.from(value), TEXT_TYPE);
    assert.deepEqual(text.json(), { text: value });
    const raw = await post('/form', Buffer.from(`v=${value}&e=${encodeURIComponent(value)}&bad=%zz&pct=100%`), FORM_TYPE);
    assert.deepEqual(raw.json(), { form: { v: value, e: value, bad: '%zz', pct: '100%' } });
  });

  test('invalidUtf8Offset: -1 exactly for what node:buffer calls UTF-8; otherwise every byte before it is UTF-8', () => {
    const byteSequences = fc.oneof(
      fc.uint8Array({ maxLength: 24 }),
      fc.string({ unit: 'binary', maxLength: 12 }).map((s) => new Uint8Array(Buffer.from(s))),
      // valid text with one byte changed: near misses
      fc
        .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), fc.nat(), fc.integer({ min: 0x80, max: 0xff }))
        .map(([s, at, byte]) => {
          const b = new Uint8Array(Buffer.from(s));
          b[at % b.length] = byte;
          return b;
        }),
    );
    fc.assert(
      fc.property(byteSequences, (b) => {
        const offset = invalidUtf8Offset(b);
        if (isUtf8(b)) return offset === -1;
        return offset >= 0 && offset < b.length && isUtf8(b.subarray(0, offset));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the charset of JSON and form bodies', () => {
  for (const charset of ['utf-8', 'utf8', 'UTF-8', 'UTF8', '"utf-8"', '"UTF8"']) {
    test(`charset=${charset} is UTF-8 for json and form alike`, async () => {
      const json = await post('/json', '{"a":"é"}', { 'content-type': `application/json; charset=${charset}` });
      assert.equal(json.statusCode, 200, json.body);
      assert.deepEqual(json.json(), { body: { a: 'é' } });
      const form = await post('/form', 'a=%C3%A9', { 'content-type': `application/x-www-form-urlencoded;charset=${charset}` });
      assert.equal(form.statusCode, 200, form.body);
      assert.deepEqual(form.json(), { form: { a: 'é' } });
    });
  }

  test('any other charset is a 415 naming it, with Accept-Post', async () => {
    for (const charset of ['latin1', 'iso-8859-1', 'utf-16', 'utf-8-x', 'unicode-1-1-utf-8']) {
      for (const [url, type, payload] of [
        ['/json', 'application/json', '{}'],
        ['/form', 'application/x-www-form-urlencoded', 'a=1'],
      ] as const) {
        const res = await post(url, payload, { 'content-type': `${type}; charset=${charset}` });
        assert.equal(res.statusCode, 415, `${url} ${charset}`);
        assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
        assert.equal(res.headers['accept-post'], type);
        assert.match(res.json().detail, new RegExp(`^the charset '${charset}' is not supported`));
      }
    }
  });

  test('a malformed Content-Type is a 415 saying what is wrong, for every kind', async () => {
    const cases: [string, string, RegExp][] = [
      ['/json', 'application/json; charset', /has a malformed parameter/],
      ['/json', 'application/json; charset="utf-8', /has a malformed parameter/],
      ['/json', 'application/json, text/plain', /is not a media type \(type\/subtype\)/],
      ['/json', 'json', /is not a media type/],
      ['/text', 'text/plain; charset=', /has a malformed parameter/],
      ['/text', 'text /plain', /is not a media type/],
      ['/form', 'application/x-www-form-urlencoded; charset=utf-8 x', /has a malformed parameter/],
      ['/form', 'application/x-www-form-urlencoded/', /is not a media type/],
    ];
    for (const [url, type, detail] of cases) {
      const res = await post(url, 'a', { 'content-type': type });
      assert.equal(res.statusCode, 415, `${url} ${type}`);
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.match(res.json().detail, detail, `${url} ${type}`);
    }
  });
});

describe('any body, property-based', () => {
  const body = fc.string({ unit: 'binary', maxLength: 40 });

  test('any valid string round-trips through json, text and form bodies', async () => {
    await fc.assert(
      fc.asyncProperty(body, body, async (name, value) => {
        const json = await post('/json', Buffer.from(JSON.stringify({ [name]: value })), JSON_TYPE);
        assert.deepEqual(json.json(), { body: { [name]: value } });
        const text = await post('/text', Buffer.from(`x${value}`), TEXT_TYPE);
        assert.deepEqual(text.json(), { text: `x${value}` });
        const pair = `${encodeURIComponent(`n${name}`)}=${encodeURIComponent(value)}`;
        const form = await post('/form', Buffer.from(pair), FORM_TYPE);
        assert.deepEqual(form.json(), { form: { [`n${name}`]: value } }, pair);
      }),
      { numRuns: 150 },
    );
  });

  test('any byte sequence is read or refused with a 4xx, never a 5xx; bytes that are not UTF-8 are INVALID_UTF8', async () => {
    const payloads = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ unit: 'binary', maxLength: 32 }).map((s) => new Uint8Array(Buffer.from(`{"a":${JSON.stringify(s)}}`))),
      // percent-encoded bytes in a form, any of them
      fc.uint8Array({ maxLength: 16 }).map((b) => new Uint8Array(Buffer.from(`a=${[...b].map((x) => `%${x.toString(16)}`).join('')}`))),
    );
    await fc.assert(
      fc.asyncProperty(payloads, fc.constantFrom('/json', '/text', '/form'), async (payload, url) => {
        const type = url === '/json' ? JSON_TYPE : url === '/text' ? TEXT_TYPE : FORM_TYPE;
        const res = await post(url, Buffer.from(payload), type);
        assert.ok(res.statusCode === 200 || (res.statusCode >= 400 && res.statusCode < 500), `${res.statusCode} ${res.body}`);
        if (!isUtf8(payload)) assert.equal(res.json().code, 'INVALID_UTF8');
      }),
      { numRuns: 300 },
    );
  });
});

describe('over a real socket', () => {
  test('a JSON body with invalid UTF-8 is a 400 INVALID_UTF8; a valid one a 200', async (t) => {
    const served = utf8App();
    const port = await serve(t, served);
    const send = async (body: Buffer) => {
      const socket = await openSocket(port);
      const head = `POST /json HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json; charset=utf8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
      const response = readUntilClose(socket);
      socket.write(Buffer.concat([Buffer.from(head), body]));
      return response;
    };
    const refused = await send(bytes('{"name":"caf', [0xe9], '"}'));
    assert.match(refused, /^HTTP\/1\.1 400 /);
    assert.match(refused, /"code":"INVALID_UTF8"/);
    assert.match(refused, /"detail":"the body is not valid UTF-8 \(byte offset 12\)"/);
    const accepted = await send(Buffer.from('{"name":"café"}'));
    assert.match(accepted, /^HTTP\/1\.1 200 /);
    assert.ok(accepted.endsWith('{"body":{"name":"café"}}'), accepted);
  });
});
