import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bodyApp } from './harness.ts';

const app = bodyApp([{ path: '/text', options: { kind: 'text', limit: 64 } }]);
const post = (payload: string | Buffer, headers: Record<string, string> = { 'content-type': 'text/plain' }) =>
  app.inject({ method: 'POST', url: '/text', headers, payload });

describe('text bodies', () => {
  test('a text body is decoded as UTF-8 by default', async () => {
    const res = await post('héllo, wörld ✓');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { text: 'héllo, wörld ✓' });
  });

  test('any text/* media type is read', async () => {
    for (const type of ['text/plain', 'text/csv', 'TEXT/Markdown; variant=GFM', 'text/html;charset=utf-8']) {
      const res = await post('a,b', { 'content-type': type });
      assert.equal(res.statusCode, 200, type);
      assert.deepEqual(res.json(), { text: 'a,b' });
    }
  });

  test('the charset parameter chooses the decoder', async () => {
    const cases: [string, Buffer, string][] = [
      ['utf-8', Buffer.from('é€', 'utf8'), 'é€'],
      ['"UTF-8"', Buffer.from('é', 'utf8'), 'é'],
      ['iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'café'],
      ['windows-1252', Buffer.from([0x80]), '€'],
      ['utf-16le', Buffer.from('hé', 'utf16le'), 'hé'],
      ['shift_jis', Buffer.from([0x82, 0xa0]), 'あ'],
    ];
    for (const [charset, bytes, text] of cases) {
      const res = await post(bytes, { 'content-type': `text/plain; charset=${charset}` });
      assert.equal(res.statusCode, 200, charset);
      assert.deepEqual(res.json(), { text }, charset);
    }
  });

  test('a UTF-8 byte order mark is not part of the text', async () => {
    const res = await post(Buffer.from([0xef, 0xbb, 0xbf, 0x61]));
    assert.deepEqual(res.json(), { text: 'a' });
  });

  test('bytes that are not valid UTF-8 are a 400 INVALID_UTF8 naming the offset, whatever label says UTF-8', async () => {
    for (const type of ['text/plain', 'text/plain; charset=utf8', 'text/csv; charset="UTF-8"', 'text/plain; charset=unicode-1-1-utf-8']) {
      const res = await post(Buffer.from([0x61, 0xc3, 0x28]), { 'content-type': type });
      assert.equal(res.statusCode, 400, type);
      assert.equal(res.json().code, 'INVALID_UTF8', type);
      assert.equal(res.json().detail, 'the body is not valid UTF-8 (byte offset 1)', type);
    }
  });

  test('bytes that are not valid in another charset are a 400 naming it', async () => {
    const res = await post(Buffer.from([0x82]), { 'content-type': 'text/plain; charset=shift_jis' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'BAD_REQUEST');
    assert.equal(res.json().detail, 'the body is not valid shift_jis');
  });

  test('an unknown charset is a 415', async () => {
    for (const charset of ['klingon', 'utf-9', 'replacement', '']) {
      const res = await post('x', { 'content-type': `text/plain; charset=${charset}` });
      assert.equal(res.statusCode, 415, charset);
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  test('a media type other than text/* is a 415 with Accept-Post', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'textual/plain' }, { 'content-type': 'text' }, {}]) {
      const res = await post('x', headers);
      assert.equal(res.statusCode, 415, JSON.stringify(headers));
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal(res.headers['accept-post'], 'text/*');
    }
  });

  test('a request without a body gives undefined', async () => {
    assert.deepEqual((await app.inject({ method: 'POST', url: '/text' })).json(), { none: true });
  });

  test('the limit counts bytes, not characters: one over is a 413', async () => {
    // 32 two-byte characters: 64 bytes
    assert.equal((await post('é'.repeat(32))).statusCode, 200);
    const res = await post('é'.repeat(32) + 'a');
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
  });
});
