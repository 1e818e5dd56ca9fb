import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { newPage } from '../../src/app/pagination/page.ts';
import { paginated } from '../../src/app/typed/paginated.ts';
import type { InjectResponse } from '../../src/index.ts';
import { controller, testApp } from '../helpers/app.ts';
import { cpuMs } from '../helpers/timing.ts';

/**
 * Route paths, query strings and request headers, property-tested through
 * `inject`: never a 5xx, never a throw, every error response a complete
 * RFC 9457 problem, and no query string reaches Object.prototype.
 */

const LOCALES = fileURLToPath(new URL('../fixtures/locales', import.meta.url));
const PROBLEM_FIELDS = ['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId'];

function routedApp() {
  const { app } = testApp({
    logging: { level: 'silent' },
    cors: { origins: ['https://app.example'] },
    i18n: { directory: LOCALES, defaultLocale: 'en' },
  });
  const int = { type: 'integer', minimum: 0 };
  app.registerController(
    controller(
      { method: 'GET', path: '/ok', handler: () => ({ ok: true }) },
      paginated(
        {
          method: 'GET',
          path: '/books',
          handler: (ctx) => {
            // a real page: the Page<T> response schema is enforced, and a valid query must get a 200
            const q = ctx.parsePagination();
            return newPage([], 0, q.page, q.limit);
          },
        },
        { type: 'object' },
      ),
      {
        method: 'GET',
        path: '/books/:id',
        schema: { params: { type: 'object', properties: { id: int } } },
        handler: (ctx) => ({ id: ctx.params['id'] }),
      },
      { method: 'DELETE', path: '/books/:id', handler: (ctx) => ctx.noContent() },
      {
        method: 'GET',
        path: '/search',
        schema: {
          querystring: {
            type: 'object',
            properties: { n: int, s: { type: 'string', maxLength: 5 }, a: { type: 'array', items: int }, b: { type: 'boolean' } },
            additionalProperties: false,
          },
        },
        handler: (ctx) => ctx.query,
      },
      { method: 'GET', path: '/query', handler: (ctx) => ({ keys: Object.keys(ctx.query) }) },
      { method: 'GET', path: '/files/*', handler: (ctx) => ({ file: ctx.params['*'] }) },
      { method: 'GET', path: '/digits/:n(^\\d+$)', handler: (ctx) => ({ n: ctx.params['n'] }) },
      { method: 'GET', path: '/hello', handler: (ctx) => ({ text: ctx.t('greeting', { name: 'x' }) }) },
      { method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) },
    ),
  );
  const api = app.group('/api', async (_ctx, next) => next());
  api.registerController(controller({ method: 'GET', path: '/items/:id', handler: (ctx) => ({ id: ctx.params['id'] }) }));
  return app;
}

const SEGMENTS = [
  'ok',
  'books',
  'search',
  'query',
  'files',
  'digits',
  'hello',
  'echo',
  'api',
  'items',
  'health',
  'docs',
  'openapi.json',
  '',
  '.',
  '..',
  '%2e%2e',
  '%',
  '%2',
  '%zz',
  '%00',
  '%2F',
  '%C0%AF',
  '%E2%82',
  '%F0%9F%98%80',
  ';',
  ':id',
  '*',
  '__proto__',
  'constructor',
  'prototype',
  '12',
  '-1',
  '1e3',
  '007',
  'a'.repeat(101),
];
const segment = fc
  .oneof(fc.constantFrom(...SEGMENTS), fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 6 }))
  // light-my-request parses the URL with WHATWG URL, which drops tabs and newlines and reads `/\` as `//`:
  // a URL starting `//` would name a host. (On a socket, node:http refuses these bytes: test/hardening/hostile-http.)
  .map((s) => s.replace(/[\\\t\n\r]/g, encodeURIComponent));
const path = fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`);
const KEYS = ['page', 'limit', 'n', 's', 'a', 'b', '__proto__', 'constructor', 'prototype', '__proto__[polluted]', 'toString', 'a[]', ''];
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 }));
const val = fc.oneof(
  fc.constantFrom('1', '0', '-1', '1.5', '9'.repeat(30), '', 'true', 'null', 'polluted', '%', '%zz'),
  fc.string({ maxLength: 8 }),
);
const query = fc
  .array(fc.tuple(key, val, fc.boolean()), { maxLength: 6 })
  .map((pairs) => pairs.map(([k, v, encode]) => (encode ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v}`)).join('&'));
const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS');
const headerValue = fc.stringMatching(/^[\t\x20-\x7e]{0,40}$/);
const headers = fc.record(
  {
    'accept-language': fc.oneof(headerValue, fc.constantFrom('fr;q=abc', '*', 'fr-CA,en;q=0.5', ';;;,', 'q=1', 'en;q=-1, fr;q=NaN')),
    origin: fc.oneof(headerValue, fc.constant('https://app.example')),
    'access-control-request-method': headerValue,
    'x-request-id': headerValue,
    'content-type': fc.oneof(headerValue, fc.constant('application/json')),
  },
  { requiredKeys: [] },
);

function checkResponse(res: InjectResponse, what: string): void {
  assert.ok(res.statusCode < 500, `${what} → ${res.statusCode} ${res.body}`);
  if (res.statusCode < 400) return;
  assert.equal(res.headers['content-type'], 'application/problem+json', what);
  if (res.body === '') return; // HEAD: the head of a problem, without its body
  const problem = res.json();
  for (const field of PROBLEM_FIELDS) assert.ok(field in problem, `${what}: no ${field} in ${res.body}`);
  assert.equal(problem.status, res.statusCode);
  assert.match(problem.type, /^urn:flotilla:problem:[a-z-]+$/);
  assert.equal(problem.requestId, res.headers['x-request-id']);
}

test('any path, query string and headers: never a 5xx, every error a complete problem, nothing polluted', async () => {
  const app = routedApp();
  await fc.assert(
    fc.asyncProperty(method, path, fc.option(query, { nil: undefined }), headers, async (m, p, q, h) => {
      const url = q === undefined ? p : `${p}?${q}`;
      const res = await app.inject({ method: m as 'GET', url, headers: h, ...(m === 'POST' ? { payload: '{"a":1}' } : {}) });
      checkResponse(res, `${m} ${url} ${JSON.stringify(h)}`);
    }),
    { numRuns: 500 },
  );
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

test('a 1 MB path, parameter or query string is answered fast, without a 5xx', async () => {
  const app = routedApp();
  const mb = 1_000_000;
  const urls = [
    `/${'a'.repeat(mb)}`,
    `/books/${'1'.repeat(mb)}`,
    `/digits/${'1'.repeat(mb)}x`,
    `/files/${'a/'.repeat(mb / 2)}`,
    `/api/items/${'%41'.repeat(mb / 3)}`,
    `/${'/'.repeat(mb)}`,
    `/%${'a'.repeat(mb)}`,
    `/query?${'a=1&'.repeat(mb / 4)}`,
    `/search?n=${'9'.repeat(mb)}`,
    `/books?page=${'9'.repeat(mb)}`,
  ];
  for (const url of urls) {
    let res: InjectResponse | undefined;
    const ms = await cpuMs(async () => {
      res = await app.inject(url);
    });
    assert.ok(res !== undefined);
    checkResponse(res, url.slice(0, 40));
    assert.ok(ms < 1_000, `${url.slice(0, 40)}… took ${Math.round(ms)} ms of CPU`);
  }
});
