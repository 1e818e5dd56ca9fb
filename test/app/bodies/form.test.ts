import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FormBody } from '../../../src/app/bodies/index.ts';
import { bodyApp } from './harness.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const app = bodyApp([
  { path: '/form', options: { kind: 'form', limit: 4096 } },
  { path: '/few', options: { kind: 'form', limit: 4096, form: { fields: 3 } } },
]);
const post = (payload: string, headers: Record<string, string> = FORM, url = '/form') =>
  app.inject({ method: 'POST', url, headers, payload });

describe('form bodies', () => {
  test('pairs become an object of strings; a repeated name an array, in order', async () => {
    const res = await post('title=Dune&tag=sf&tag=classic&empty=&flag&tag=novel');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { form: { title: 'Dune', tag: ['sf', 'classic', 'novel'], empty: '', flag: '' } });
  });

  test('names and values are decoded as the URL Standard does', async () => {
    const res = await post('a+b=c+d&%C3%A9t%C3%A9=%E2%9C%93&pct=100%25&bad=%zz&amp=%26');
    assert.deepEqual(res.json(), { form: { 'a b': 'c d', été: '✓', pct: '100%', bad: '%zz', amp: '&' } });
  });

  test('names are flat: brackets and dots are kept as they are', async () => {
    const res = await post('user[name]=ada&user.age=36');
    assert.deepEqual(res.json(), { form: { 'user[name]': 'ada', 'user.age': '36' } });
  });

  test('the value is a plain object whose own keys are the names only', async () => {
    let form: FormBody | undefined;
    const capture = bodyApp([
      {
        path: '/form',
        options: { kind: 'form', limit: 1024 },
        consume: (body) => {
          form = body as FormBody;
          return {};
        },
      },
    ]);
    await capture.inject({ method: 'POST', url: '/form', headers: FORM, payload: 'toString=x&hasOwnProperty=y&constructor=z' });
    assert.ok(form !== undefined);
    assert.equal(Object.getPrototypeOf(form), Object.prototype);
    assert.deepEqual(Object.keys(form), ['toString', 'hasOwnProperty', 'constructor']);
    assert.equal(form['constructor'], 'z');
  });

  test('__proto__ names, and names that expand to a prototype, are a 400 and pollute nothing', async () => {
    for (const payload of [
      '__proto__=x',
      '__proto__[polluted]=yes',
      '%5F%5Fproto%5F%5F=x',
      'a=1&__proto__=x',
      'a[__proto__][polluted]=yes',
      'a.__proto__.polluted=yes',
      'constructor[prototype][polluted]=yes',
      'constructor.prototype.polluted=yes',
    ]) {
      const res = await post(payload);
      assert.equal(res.statusCode, 400, payload);
      assert.equal(res.json().code, 'FORBIDDEN_KEY', payload);
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  test('names that only look dangerous are kept', async () => {
    const res = await post('constructor=x&prototype=y&proto=z&__proto=1&a[prototype]=2');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { form: { constructor: 'x', prototype: 'y', proto: 'z', __proto: '1', 'a[prototype]': '2' } });
  });

  test('more pairs than form.fields is a 413; empty pieces do not count', async () => {
    assert.equal((await post('a=1&&b=2&c=3&', FORM, '/few')).statusCode, 200);
    const res = await post('a=1&b=2&c=3&d=4', FORM, '/few');
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
    assert.equal(res.json().detail, 'the form has more than 3 fields');
  });

  test('the default field limit is 1000', async () => {
    const big = bodyApp([{ path: '/form', options: { kind: 'form', limit: 1 << 20 } }]);
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join('&');
    assert.equal((await big.inject({ method: 'POST', url: '/form', headers: FORM, payload: pairs(1000) })).statusCode, 200);
    assert.equal((await big.inject({ method: 'POST', url: '/form', headers: FORM, payload: pairs(1001) })).statusCode, 413);
  });

  test('another media type or charset is a 415 with Accept-Post', async () => {
    for (const headers of [
      { 'content-type': 'application/json' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' },
      {},
    ]) {
      const res = await post('a=1', headers);
      assert.equal(res.statusCode, 415, JSON.stringify(headers));
      assert.equal(res.headers['accept-post'], 'application/x-www-form-urlencoded');
    }
    assert.equal((await post('a=1', { 'content-type': 'Application/X-WWW-Form-URLEncoded; charset=UTF-8' })).statusCode, 200);
  });

  test('a request without a body gives undefined; one byte over the limit is a 413', async () => {
    assert.deepEqual((await app.inject({ method: 'POST', url: '/form' })).json(), { none: true });
    const small = bodyApp([{ path: '/form', options: { kind: 'form', limit: 10 } }]);
    assert.equal((await small.inject({ method: 'POST', url: '/form', headers: FORM, payload: 'a=12345678' })).statusCode, 200);
    const res = await small.inject({ method: 'POST', url: '/form', headers: FORM, payload: 'a=123456789' });
    assert.equal(res.statusCode, 413);
    assert.equal(res.headers['connection'], 'close');
  });
});
