import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { CookieSigner } from '../../../src/app/cookies/cookie-signer.ts';

const OLD = 'the-old-secret-that-signed-last-month';
const NEW = 'the-new-secret-that-signs-from-today';

describe('CookieSigner', () => {
  test('signs with HMAC-SHA256 of the first secret, base64url, after a dot', () => {
    const signed = new CookieSigner([NEW, OLD]).sign('user-7');
    assert.equal(signed, `user-7.${createHmac('sha256', NEW).update('user-7').digest('base64url')}`);
    assert.match(signed, /^user-7\.[A-Za-z0-9_-]{43}$/);
  });

  test('verifies what any of the secrets signed: rotation', () => {
    const before = new CookieSigner([OLD]).sign('user-7');
    const rotated = new CookieSigner([NEW, OLD]);
    assert.equal(rotated.unsign(before), 'user-7');
    assert.equal(rotated.unsign(rotated.sign('user-7')), 'user-7');
    // once the old secret is dropped, what it signed no longer verifies
    assert.equal(new CookieSigner([NEW]).unsign(before), undefined);
  });

  test('a value with dots keeps them', () => {
    const signer = new CookieSigner([NEW]);
    assert.equal(signer.unsign(signer.sign('a.b.c')), 'a.b.c');
    assert.equal(signer.unsign(signer.sign('')), '');
  });

  test('tampered and malformed values read as undefined', () => {
    const signer = new CookieSigner([NEW]);
    const signed = signer.sign('user-7');
    const signature = signed.slice(signed.indexOf('.') + 1);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [
      `user-8.${signature}`, // another value, the same signature
      `user-7.${flip(signature, 0)}`,
      `user-7.${flip(signature, 42)}`, // the last character, whose low bits base64 decoding would ignore
      `user-7.${signature}=`, // padded
      `user-7.${signature.slice(1)}`, // short
      `user-7.${signature}A`, // long
      `user-7.${'Ł'}${signature.slice(1)}`, // a character outside ASCII whose low byte is 'A'
      'user-7', // unsigned
      'user-7.',
      '',
      `.${signature}`,
    ]) {
      assert.equal(signer.unsign(bad), undefined, bad);
    }
  });

  test('needs a secret', () => {
    assert.throws(() => new CookieSigner([]), TypeError);
  });
});
