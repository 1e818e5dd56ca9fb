import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ERROR_CODES, type ErrorCode, problemType } from '../../src/errors/codes.ts';
import { KError } from '../../src/errors/k-error.ts';
import { toProblem } from '../../src/errors/problem.ts';

describe('toProblem', () => {
  test('a KError becomes its status, code and message as detail, with the request id and instance', () => {
    const p = toProblem(KError.notFound('book 42 does not exist'), {
      instance: '/books/42',
      requestId: 'req-1',
      traceId: undefined,
      production: false,
    });
    assert.equal(p.status, 404);
    assert.equal(p.internal, false);
    assert.deepEqual(p.body, {
      type: 'urn:flotilla:problem:not-found',
      title: 'Not Found',
      status: 404,
      detail: 'book 42 does not exist',
      instance: '/books/42',
      code: 'NOT_FOUND',
      requestId: 'req-1',
    });
  });

  test('a KError keeps its details and headers, in production too', () => {
    const e = KError.tooManyRequests('slow down', { details: { limit: 10 }, headers: { 'Retry-After': '30' } });
    const p = toProblem(e, { instance: '/x', requestId: 'r', traceId: undefined, production: true });
    assert.equal(p.status, 429);
    assert.deepEqual(p.body.details, { limit: 10 });
    assert.deepEqual(p.headers, { 'Retry-After': '30' });
    assert.equal(p.body.detail, 'slow down');
  });

  test('a KError with a code of its own gets the HTTP reason phrase as title', () => {
    const p = toProblem(new KError(409, 'ISBN_TAKEN', 'taken'), {
      instance: '/books',
      requestId: 'r',
      traceId: undefined,
      production: false,
    });
    assert.equal(p.body.title, 'Conflict');
    assert.equal(p.body.code, 'ISBN_TAKEN');
    assert.equal(p.body.type, 'urn:flotilla:problem:isbn-taken');
  });

  test('a 5xx KError is flagged for logging; a 4xx is not', () => {
    assert.equal(toProblem(KError.unavailable(), { instance: '/', requestId: 'r', traceId: undefined, production: false }).internal, true);
    assert.equal(toProblem(KError.conflict(), { instance: '/', requestId: 'r', traceId: undefined, production: false }).internal, false);
  });

  test('any other error is a generic 500 whose message shows only outside production', () => {
    const error = new Error('connection to 10.0.0.7:5432 refused');
    const dev = toProblem(error, { instance: '/books', requestId: 'r', traceId: undefined, production: false });
    assert.equal(dev.status, 500);
    assert.equal(dev.internal, true);
    assert.equal(dev.body.code, 'INTERNAL');
    assert.equal(dev.body.detail, 'connection to 10.0.0.7:5432 refused');

    const prod = toProblem(error, { instance: '/books', requestId: 'r', traceId: undefined, production: true });
    assert.equal(prod.status, 500);
    assert.equal(prod.body.title, 'Internal Server Error');
    assert.doesNotMatch(JSON.stringify(prod.body), /10\.0\.0\.7|refused|Error:/);
    assert.equal(prod.headers, undefined);
  });

  test('thrown values that are not errors become a 500 too', () => {
    for (const thrown of ['a string', 42, null, undefined, { message: 'object' }]) {
      const p = toProblem(thrown, { instance: '/', requestId: 'r', traceId: undefined, production: true });
      assert.equal(p.status, 500);
      assert.equal(p.body.detail, 'An internal error occurred.');
    }
    assert.equal(toProblem('a string', { instance: '/', requestId: 'r', traceId: undefined, production: false }).body.detail, 'a string');
  });

  test('every registered code yields its registered status and title', () => {
    for (const [code, { status, title }] of Object.entries(ERROR_CODES)) {
      const p = toProblem(KError.of(code as ErrorCode), { instance: '/', requestId: 'r', traceId: undefined, production: true });
      assert.equal(p.status, status, code);
      assert.equal(p.body.status, status, code);
      assert.equal(p.body.title, title, code);
      assert.equal(p.body.code, code);
      assert.equal(p.body.type, problemType(code));
    }
  });

  test('registered codes are unique per type URI and all error statuses', () => {
    const types = Object.keys(ERROR_CODES).map(problemType);
    assert.equal(new Set(types).size, types.length);
    for (const { status } of Object.values(ERROR_CODES)) assert.ok(status >= 400 && status <= 599);
  });
});
