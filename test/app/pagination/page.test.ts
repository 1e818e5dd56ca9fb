import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { newPage, offsetOf, PAGE_DEFAULTS, pageSchema, parsePagination } from '../../../src/app/pagination/page.ts';
import { KError } from '../../../src/errors/k-error.ts';

function rejects(query: Record<string, unknown>, parameter: 'page' | 'limit'): KError {
  let caught: unknown;
  try {
    parsePagination(query);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof KError, `expected a KError for ${JSON.stringify(query)}`);
  assert.equal(caught.status, 400);
  assert.equal(caught.code, 'INVALID_PAGINATION');
  assert.deepEqual((caught.details as { parameter: string }).parameter, parameter);
  assert.match(caught.message, new RegExp(`query parameter '${parameter}'`));
  return caught;
}

describe('newPage', () => {
  test('computes total_pages as ceil(total / limit) with the exact JSON field names', () => {
    const page = newPage(['a', 'b'], 41, 3, 20);
    assert.equal(JSON.stringify(page), '{"data":["a","b"],"total":41,"page":3,"limit":20,"total_pages":3}');
    assert.equal(newPage([], 40, 1, 20).total_pages, 2);
    assert.equal(newPage([], 1, 1, 100).total_pages, 1);
  });

  test('has 0 pages when there is nothing, and never Infinity or NaN', () => {
    assert.equal(newPage([], 0, 1, 20).total_pages, 0);
    assert.equal(newPage([], 10, 1, 0).total_pages, 0);
  });
});

describe('offsetOf', () => {
  test('is (page - 1) * limit', () => {
    assert.equal(offsetOf({ page: 1, limit: 20 }), 0);
    assert.equal(offsetOf({ page: 3, limit: 25 }), 50);
  });
});

describe('parsePagination', () => {
  test('missing or empty values take the defaults', () => {
    assert.deepEqual(parsePagination({}), { page: 1, limit: 20 });
    assert.deepEqual(parsePagination({ page: '', limit: '' }), { page: 1, limit: 20 });
    assert.deepEqual(parsePagination({ page: undefined }), { page: 1, limit: 20 });
    assert.deepEqual(PAGE_DEFAULTS, { page: 1, limit: 20, maxLimit: 100 });
  });

  test('reads plain decimal positive integers', () => {
    assert.deepEqual(parsePagination({ page: '3', limit: '50' }), { page: 3, limit: 50 });
    assert.deepEqual(parsePagination({ page: '007', limit: '1' }), { page: 7, limit: 1 });
    assert.deepEqual(parsePagination({ page: 2, limit: 10 }), { page: 2, limit: 10 });
  });

  test('reduces a limit above 100 to 100, however large', () => {
    assert.deepEqual(parsePagination({ limit: '101' }), { page: 1, limit: 100 });
    assert.deepEqual(parsePagination({ limit: '9'.repeat(400) }), { page: 1, limit: 100 });
  });

  for (const value of ['abc', '1.5', '0', '000', '-3', '1e3', '0x10', ' 5', '5 ', '+5', '١', 'Infinity', 'NaN', '5abc']) {
    test(`rejects page=${JSON.stringify(value)} and limit=${JSON.stringify(value)} with a 400 naming the parameter`, () => {
      const e = rejects({ page: value }, 'page');
      assert.equal(e.message, "query parameter 'page' must be a positive integer");
      assert.deepEqual(e.details, { parameter: 'page', value });
      rejects({ limit: value }, 'limit');
    });
  }

  test('rejects non-integer numbers and other types', () => {
    rejects({ page: 1.5 }, 'page');
    rejects({ page: 0 }, 'page');
    rejects({ limit: -1 }, 'limit');
    rejects({ page: Number.NaN }, 'page');
    rejects({ page: true }, 'page');
    rejects({ page: null }, 'page');
    rejects({ page: { a: '1' } }, 'page');
  });

  test('rejects a repeated parameter', () => {
    const e = rejects({ page: ['1', '2'] }, 'page');
    assert.deepEqual(e.details, { parameter: 'page', value: ['1', '2'] });
    rejects({ limit: ['10'] }, 'limit');
  });

  test('rejects a page whose offset would pass Number.MAX_SAFE_INTEGER', () => {
    const lastPage = Math.floor(Number.MAX_SAFE_INTEGER / 20) + 1; // offset = (lastPage - 1) * 20 <= MAX_SAFE
    assert.deepEqual(parsePagination({ page: String(lastPage) }), { page: lastPage, limit: 20 });
    rejects({ page: String(lastPage + 1) }, 'page');
    assert.deepEqual(parsePagination({ page: String(Number.MAX_SAFE_INTEGER), limit: '1' }), { page: Number.MAX_SAFE_INTEGER, limit: 1 });
    rejects({ page: '9007199254740993', limit: '1' }, 'page');
    rejects({ page: '9'.repeat(400) }, 'page');
  });

  test('ignores a polluted Object.prototype', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto['page'] = 'abc';
    try {
      assert.deepEqual(parsePagination({}), { page: 1, limit: 20 });
    } finally {
      delete proto['page'];
    }
  });

  test('never throws anything but INVALID_PAGINATION, and always returns a safe offset', () => {
    const value = fc.oneof(fc.anything(), fc.string(), fc.stringMatching(/^[0-9]{1,30}$/), fc.array(fc.string(), { maxLength: 3 }));
    fc.assert(
      fc.property(fc.option(value, { nil: undefined }), fc.option(value, { nil: undefined }), (page, limit) => {
        const query: Record<string, unknown> = {};
        if (page !== undefined) query['page'] = page;
        if (limit !== undefined) query['limit'] = limit;
        try {
          const q = parsePagination(query);
          assert.ok(Number.isSafeInteger(q.page) && q.page >= 1);
          assert.ok(Number.isSafeInteger(q.limit) && q.limit >= 1 && q.limit <= 100);
          assert.ok(Number.isSafeInteger(offsetOf(q)));
        } catch (e) {
          assert.ok(e instanceof KError && e.code === 'INVALID_PAGINATION' && e.status === 400, String(e));
          JSON.stringify(e.details);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('pageSchema', () => {
  const item = { type: 'object', properties: { id: { type: 'integer' } } };

  test('pageSchema describes the envelope', () => {
    const schema = pageSchema(item) as { required: string[]; properties: Record<string, Record<string, unknown>> };
    assert.deepEqual(schema.required, ['data', 'total', 'page', 'limit', 'total_pages']);
    assert.deepEqual(schema.properties['data'], { type: 'array', items: item });
    assert.equal(schema.properties['total_pages']?.['type'], 'integer');
    assert.equal(schema.properties['page']?.['minimum'], 1);
  });
});
