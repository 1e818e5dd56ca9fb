import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { offsetOf, parsePagination } from '../../src/app/pagination/page.ts';
import { paginated } from '../../src/app/typed/paginated.ts';
import { KError } from '../../src/errors/k-error.ts';
import { controller, testApp } from '../helpers/app.ts';

/**
 * Pagination through the whole pipeline (query string parsing included): any
 * `page`/`limit` pair, absent, empty, repeated or anything else, answers
 * either 200 with a page query inside the bounds and a safe offset, or a 400
 * INVALID_PAGINATION problem naming the parameter — the same decision as
 * `parsePagination` on the decoded values. (test/app/pagination.test.ts
 * covers the function itself with arbitrary values.)
 */

const ITEM = { type: 'object', properties: { id: { type: 'integer' } } };
// the routes answer with the parsed query, not a page: their 200 schema says so (a paginated route's own 200 schema wins)
const ECHO = { type: 'object', properties: { page: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } } };

function pagedApp() {
  const { app } = testApp({ logging: { level: 'silent' } });
  const handler = (ctx: { parsePagination(): { page: number; limit: number } }) => {
    const q = ctx.parsePagination();
    return { ...q, offset: offsetOf(q) };
  };
  app.registerController(
    controller(
      paginated({ method: 'GET', path: '/books', schema: { response: { 200: ECHO } }, handler }, ITEM),
      // a strict querystring schema must still let page and limit through to parsePagination
      paginated(
        {
          method: 'GET',
          path: '/strict',
          schema: {
            querystring: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
            response: { 200: ECHO },
          },
          handler,
        },
        ITEM,
      ),
    ),
  );
  return app;
}

const numeric = fc.oneof(
  fc.nat().map(String),
  fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
  fc.stringMatching(/^[0-9]{1,25}$/),
  fc.constantFrom('0', '00', '1', '100', '101', '9007199254740991', '9007199254740992', '450359962737049', '450359962737050'),
);
const hostile = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', ' ', '-1', '+1', '1.0', '1e2', '0x10', 'Infinity', 'NaN', '١٢', '1\u0000', 'true', '[]', '{}', '__proto__'),
);
const value = fc.oneof({ weight: 3, arbitrary: numeric }, { weight: 2, arbitrary: hostile });
/** A parameter: absent, once, or repeated. */
const param = fc.oneof(
  fc.constant<string[]>([]),
  value.map((v) => [v]),
  fc.array(value, { minLength: 2, maxLength: 3 }),
);

test('any page/limit pair is a page within the bounds or a 400 naming the parameter, as parsePagination decides', async () => {
  const app = pagedApp();
  await fc.assert(
    fc.asyncProperty(param, param, fc.constantFrom('/books', '/strict'), fc.boolean(), async (pages, limits, path, reversed) => {
      const pairs = [...pages.map((v) => ['page', v] as const), ...limits.map((v) => ['limit', v] as const)];
      if (reversed) pairs.reverse();
      const qs = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
      const res = await app.inject(`${path}${qs === '' ? '' : `?${qs}`}`);
      const query: Record<string, unknown> = {};
      if (pages.length > 0) query['page'] = pages.length === 1 ? pages[0] : pages;
      if (limits.length > 0) query['limit'] = limits.length === 1 ? limits[0] : limits;
      let expected: { page: number; limit: number } | KError;
      try {
        expected = parsePagination(query);
      } catch (error) {
        assert.ok(error instanceof KError);
        expected = error;
      }
      if (expected instanceof KError) {
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.headers['content-type'], 'application/problem+json');
        const problem = res.json();
        assert.equal(problem.code, 'INVALID_PAGINATION');
        assert.equal(problem.details.parameter, (expected.details as { parameter: string }).parameter);
        assert.equal(problem.detail, expected.message);
      } else {
        assert.equal(res.statusCode, 200, res.body);
        const q = res.json();
        assert.deepEqual({ page: q.page, limit: q.limit }, expected);
        assert.ok(Number.isSafeInteger(q.page) && q.page >= 1);
        assert.ok(Number.isSafeInteger(q.limit) && q.limit >= 1 && q.limit <= 100);
        assert.ok(Number.isSafeInteger(q.offset) && q.offset >= 0);
      }
    }),
    { numRuns: 500 },
  );
});

test('raw, unencoded query strings around page and limit never fail the server', async () => {
  const app = pagedApp();
  const raw = fc.stringMatching(/^[a-z0-9=&%+;.\-_~[\]]{0,40}$/);
  const around = fc.tuple(raw, fc.constantFrom('page=', 'limit=', 'page[]=', 'page=1&page=', '%70age=', 'pag%65=', 'page%3D1=', ''), raw);
  await fc.assert(
    fc.asyncProperty(around, fc.constantFrom('/books', '/strict'), async ([before, middle, after], path) => {
      const res = await app.inject(`${path}?${before}${middle}${after}`);
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `${res.statusCode} ${res.body}`);
      if (res.statusCode === 400) {
        assert.equal(res.headers['content-type'], 'application/problem+json');
        assert.ok(['INVALID_PAGINATION', 'VALIDATION_FAILED'].includes(res.json().code), res.body);
      } else {
        const q = res.json();
        assert.ok(q.limit >= 1 && q.limit <= 100 && Number.isSafeInteger(q.offset));
      }
    }),
    { numRuns: 300 },
  );
});
