import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ERROR_CODES } from '../../src/errors/codes.ts';
import { KError } from '../../src/errors/k-error.ts';

describe('KError', () => {
  test('carries status, code, message, details, headers and cause', () => {
    const cause = new Error('duplicate key value');
    const e = new KError(409, 'ISBN_TAKEN', 'a book with this ISBN exists', {
      details: { isbn: '978-3' },
      headers: { 'Retry-After': '1' },
      cause,
    });
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'KError');
    assert.equal(e.status, 409);
    assert.equal(e.code, 'ISBN_TAKEN');
    assert.equal(e.message, 'a book with this ISBN exists');
    assert.deepEqual(e.details, { isbn: '978-3' });
    assert.deepEqual(e.headers, { 'Retry-After': '1' });
    assert.equal(e.cause, cause);
    assert.match(e.stack ?? '', /k-error\.test\.ts/);
  });

  test('leaves details, headers and cause out when not given', () => {
    const e = new KError(400, 'BAD_REQUEST', 'nope');
    assert.equal(e.details, undefined);
    assert.equal(e.headers, undefined);
    assert.equal('cause' in e, false);
  });

  test('rejects a status that is not an error status', () => {
    for (const status of [200, 302, 399, 600, 404.5, Number.NaN]) {
      assert.throws(() => new KError(status, 'X', 'x'), { name: 'TypeError', message: /400\.\.599/ });
    }
  });

  const helpers = [
    ['badRequest', 400, 'BAD_REQUEST'],
    ['unauthorized', 401, 'UNAUTHORIZED'],
    ['forbidden', 403, 'FORBIDDEN'],
    ['notFound', 404, 'NOT_FOUND'],
    ['conflict', 409, 'CONFLICT'],
    ['unprocessable', 422, 'UNPROCESSABLE'],
    ['tooManyRequests', 429, 'TOO_MANY_REQUESTS'],
    ['internal', 500, 'INTERNAL'],
    ['unavailable', 503, 'UNAVAILABLE'],
  ] as const;

  for (const [helper, status, code] of helpers) {
    test(`KError.${helper}() is a ${status} ${code}, its title as the default message`, () => {
      const plain = KError[helper]();
      assert.equal(plain.status, status);
      assert.equal(plain.code, code);
      assert.equal(plain.message, ERROR_CODES[code].title);
      const custom = KError[helper]('custom message', { details: { a: 1 } });
      assert.equal(custom.message, 'custom message');
      assert.deepEqual(custom.details, { a: 1 });
    });
  }

  test('KError.of builds any registered code with its status', () => {
    for (const [code, { status, title }] of Object.entries(ERROR_CODES)) {
      const e = KError.of(code as keyof typeof ERROR_CODES);
      assert.equal(e.status, status, code);
      assert.equal(e.code, code);
      assert.equal(e.message, title);
    }
  });
});
