import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { bodyApp } from './harness.ts';

const SECRET = 'whsec_test_secret';

/** A webhook's check: the HMAC-SHA256 of the exact bytes received, against the hex signature header, in constant time. */
function verifySignature(body: Buffer | undefined, ctx: Ctx): { verified: true; event: unknown } {
  const header = ctx.headers['x-signature'];
  const given = Buffer.from(typeof header === 'string' ? header : '', 'hex');
  const expected = createHmac('sha256', SECRET)
    .update(body ?? Buffer.alloc(0))
    .digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw KError.unauthorized('the signature does not match');
  // trusted only now: parse what was signed
  return { verified: true, event: JSON.parse((body ?? Buffer.alloc(0)).toString('utf8')) };
}

const sign = (payload: Buffer | string) => createHmac('sha256', SECRET).update(payload).digest('hex');

describe('raw bodies', () => {
  test('the bytes given are exactly the bytes sent, whatever they are', async () => {
    const app = bodyApp([{ path: '/raw', options: { kind: 'raw', limit: 1 << 20 } }]);
    const payloads = [
      Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 0x0d, 0x0a]),
      Buffer.from('{"a": 1,   "b":"é"}\n', 'utf8'),
      Buffer.from([0xc3, 0x28, 0xef, 0xbb, 0xbf]),
      Buffer.alloc(300_000, 0xa5),
    ];
    for (const payload of payloads) {
      const res = await app.inject({ method: 'POST', url: '/raw', headers: { 'content-type': 'application/octet-stream' }, payload });
      assert.equal(res.statusCode, 200);
      const got = Buffer.from(res.json().base64, 'base64');
      assert.ok(got.equals(payload), `${payload.length} bytes`);
    }
  });

  test('any media type is accepted, and none at all', async () => {
    const app = bodyApp([{ path: '/raw', options: { kind: 'raw', limit: 1024 } }]);
    for (const type of ['application/json', 'text/plain; charset=latin1', 'image/png', 'whatever', undefined]) {
      const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
      const res = await app.inject({ method: 'POST', url: '/raw', headers, payload: 'abc' });
      assert.equal(res.statusCode, 200, String(type));
      assert.equal(res.json().base64, Buffer.from('abc').toString('base64'));
    }
  });

  test('mediaTypes narrows the accepted types: 415 with Accept-Post for the others', async () => {
    const app = bodyApp([{ path: '/raw', options: { kind: 'raw', limit: 1024, mediaTypes: ['application/json', 'image/*'] } }]);
    for (const type of ['application/json', 'application/json; charset=utf-8', 'image/png', 'IMAGE/webp']) {
      const res = await app.inject({ method: 'POST', url: '/raw', headers: { 'content-type': type }, payload: '{}' });
      assert.equal(res.statusCode, 200, type);
    }
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/jsonx' }, {}]) {
      const res = await app.inject({ method: 'POST', url: '/raw', headers, payload: '{}' });
      assert.equal(res.statusCode, 415, JSON.stringify(headers));
      assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal(res.headers['accept-post'], 'application/json, image/*');
    }
  });

  test('a request without a body gives undefined', async () => {
    const app = bodyApp([{ path: '/raw', options: { kind: 'raw', limit: 1024 } }]);
    assert.deepEqual((await app.inject({ method: 'POST', url: '/raw' })).json(), { none: true });
  });

  test('one byte over the limit is a 413 that closes the connection', async () => {
    const app = bodyApp([{ path: '/raw', options: { kind: 'raw', limit: 100 } }]);
    assert.equal((await app.inject({ method: 'POST', url: '/raw', payload: Buffer.alloc(100) })).statusCode, 200);
    const res = await app.inject({ method: 'POST', url: '/raw', payload: Buffer.alloc(101) });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
    assert.equal(res.headers['connection'], 'close');
  });

  describe('the HMAC webhook example', () => {
    const app = bodyApp([
      { path: '/webhook', options: { kind: 'raw', limit: 64 * 1024 }, consume: (body, ctx) => verifySignature(body as Buffer, ctx) },
    ]);
    // spacing and key order the sender chose: re-serialized JSON would not match the signature
    const payload = '{ "type":"invoice.paid",  "amount": 4200, "note": "caf\u00e9" }';

    test('a body signed with the secret verifies', async () => {
      const res = await app.inject({
        method: 'POST',
        url: '/webhook',
        headers: { 'content-type': 'application/json', 'x-signature': sign(payload) },
        payload,
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { verified: true, event: { type: 'invoice.paid', amount: 4200, note: 'café' } });
    });

    test('a body changed by one byte, or a wrong signature, does not', async () => {
      for (const [body, signature] of [
        [payload.replace('4200', '4201'), sign(payload)],
        [payload, sign(`${payload} `)],
        [payload, 'not-hex'],
        [payload, ''],
      ] as const) {
        const res = await app.inject({
          method: 'POST',
          url: '/webhook',
          headers: { 'content-type': 'application/json', 'x-signature': signature },
          payload: body,
        });
        assert.equal(res.statusCode, 401, `${body} / ${signature}`);
      }
    });
  });
});
