import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_BODY_DEPTH } from '../../src/app/bodies/index.ts';
import { controller, testApp } from '../helpers/app.ts';
import { cpuMs } from '../helpers/timing.ts';

/**
 * JSON bodies, property-tested through `inject`: any JSON value, nested up to
 * the limit and beyond, with huge or odd numbers, with `__proto__`,
 * `constructor` and `prototype` keys at any depth (escaped or not). Each is
 * accepted and echoed exactly, or refused with a 400 problem — never a 5xx —
 * and `Object.prototype` stays untouched.
 */

const HEADERS = { 'content-type': 'application/json' };

function echoApp() {
  const { app } = testApp({ logging: { level: 'silent' }, limits: { bodyBytes: 4 * 1024 * 1024 } });
  app.registerController(
    controller(
      { method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) },
      {
        method: 'PUT',
        path: '/validated',
        // ajv fills defaults in place (useDefaults): it must not reach a prototype either
        schema: {
          body: {
            type: 'object',
            properties: { a: { type: 'object', properties: { x: { default: 1 } } }, constructor: { type: 'object' } },
          },
        },
        handler: (ctx) => ({ body: ctx.body }),
      },
    ),
  );
  return app;
}

type Json = { kind: 'raw'; text: string } | { kind: 'array'; items: Json[] } | { kind: 'object'; entries: [string, Json][] };

const NUMBERS = ['0', '-0', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '9007199254740993', '0.1', '-1.5E+3', '1E2'];
const KEYS = ['__proto__', 'constructor', 'prototype', 'polluted', 'toString', 'hasOwnProperty', 'a', '', '__proto', 'proto__'];

const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .oneof(
        fc.constantFrom(...NUMBERS),
        fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null)).map((v) => JSON.stringify(v)),
      )
      .map((text): Json => ({ kind: 'raw', text })),
    fc.array(tie('json'), { maxLength: 4 }).map((items): Json => ({ kind: 'array', items })),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 5 })), tie('json')), { maxLength: 4 })
      .map((entries): Json => ({ kind: 'object', entries })),
  ),
}));

/** JSON text for a tree; `escaped` spells some key characters as \uXXXX, as a filter matching raw text would miss them. */
function render(node: Json, escaped: boolean): string {
  if (node.kind === 'raw') return node.text;
  if (node.kind === 'array') return `[${node.items.map((item) => render(item, escaped)).join(',')}]`;
  const key = (k: string) =>
    escaped ? JSON.stringify(k).replace(/[_p]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : JSON.stringify(k);
  return `{${node.entries.map(([k, v]) => `${key(k)}:${render(v, escaped)}`).join(',')}}`;
}

/**
 * Whether the parsed value has a `__proto__` key, or a `constructor` object
 * with a `prototype` key: the forbidden shapes. Of a repeated key only the last
 * value counts, as in `JSON.parse`.
 */
function forbidden(node: Json): boolean {
  if (node.kind === 'raw') return false;
  if (node.kind === 'array') return node.items.some(forbidden);
  const entries = [...new Map(node.entries)];
  return entries.some(
    ([k, v]) => k === '__proto__' || (k === 'constructor' && v.kind === 'object' && new Map(v.entries).has('prototype')) || forbidden(v),
  );
}

function depthOf(node: Json): number {
  if (node.kind === 'raw') return 0;
  const children = node.kind === 'array' ? node.items : node.entries.map(([, v]) => v);
  return 1 + Math.max(0, ...children.map(depthOf));
}

test('any JSON body, prototype keys at any depth included: echoed exactly or a 400, never a 5xx, nothing polluted', async () => {
  const app = echoApp();
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  const wrap = fc.nat({ max: MAX_BODY_DEPTH + 200 });
  await fc.assert(
    fc.asyncProperty(
      json,
      fc.boolean(),
      fc.oneof(fc.constant(0), wrap),
      fc.constantFrom('/echo', '/validated'),
      async (tree, escaped, extra, url) => {
        // wrapping in `extra` arrays reaches and passes the nesting limit
        const text = `${'['.repeat(extra)}${render(tree, escaped)}${']'.repeat(extra)}`;
        const res = await app.inject({ method: url === '/echo' ? 'POST' : 'PUT', url, headers: HEADERS, payload: text });
        assert.ok(res.statusCode < 500, `${res.statusCode} ${res.body}`);
        if (depthOf(tree) + extra > MAX_BODY_DEPTH) {
          assert.equal(res.statusCode, 400);
          assert.equal(res.json().code, 'BAD_REQUEST');
        } else if (forbidden(tree)) {
          assert.equal(res.statusCode, 400, text);
          assert.equal(res.json().code, 'FORBIDDEN_KEY');
          assert.equal(res.headers['content-type'], 'application/problem+json');
        } else if (res.statusCode === 400) {
          assert.equal(url, '/validated', `only a schema refuses valid JSON: ${res.body}`);
          assert.equal(res.json().code, 'VALIDATION_FAILED');
        } else {
          assert.equal(res.statusCode, 200, res.body);
          if (url === '/echo') assert.deepEqual(res.json().body, JSON.parse(JSON.stringify(JSON.parse(text))));
        }
      },
    ),
    { numRuns: 500 },
  );
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.equal(({} as Record<string, unknown>)['x'], undefined);
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);
});

test('mangled JSON text is a 400 MALFORMED_JSON problem, or valid JSON echoed', async () => {
  const app = echoApp();
  const mangle = fc.record({
    at: fc.nat(),
    cut: fc.nat({ max: 3 }),
    insert: fc.constantFrom('', '"', '\\', ',', ':', '{', ']', '\u0000', '\ufeff', ' ', '/*', 'NaN', '\ud800', '\\u12', '\\ud800'),
  });
  await fc.assert(
    fc.asyncProperty(json, mangle, async (tree, m) => {
      const valid = render(tree, false);
      const at = m.at % (valid.length + 1);
      // what the server receives: the text as UTF-8 (a lone surrogate becomes U+FFFD)
      const text = Buffer.from(valid.slice(0, at) + m.insert + valid.slice(at + m.cut)).toString();
      const res = await app.inject({ method: 'POST', url: '/echo', headers: HEADERS, payload: text });
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `${res.statusCode} ${res.body}`);
      let parsed: unknown;
      let parses = true;
      try {
        parsed = JSON.parse(text.replace(/^\ufeff/, ''));
      } catch {
        parses = false;
      }
      if (res.statusCode === 400) assert.ok(['MALFORMED_JSON', 'FORBIDDEN_KEY', 'BAD_REQUEST'].includes(res.json().code), res.body);
      if (!parses && text.trim() !== '') assert.equal(res.statusCode, 400, `accepted invalid JSON: ${JSON.stringify(text)}`);
      if (res.statusCode === 200 && parses) assert.deepEqual(res.json().body, JSON.parse(JSON.stringify(parsed)));
    }),
    { numRuns: 300 },
  );
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

test('huge numbers, long strings and wide structures are accepted without a 5xx', async () => {
  const app = echoApp();
  const bodies = [
    `[${'9'.repeat(100_000)}]`,
    `[1e${'9'.repeat(1000)}]`,
    `[-0.${'0'.repeat(100_000)}1]`,
    JSON.stringify({ s: 'x'.repeat(1_000_000) }),
    JSON.stringify(Array.from({ length: 200_000 }, (_, i) => i)),
    `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
    `{${Array.from({ length: 1000 }, () => '"a":1').join(',')}}`,
    JSON.stringify({ __proto__x: 1, constructor: { prototyp: 1 }, prototype: { constructor: 1 } }),
  ];
  for (const body of bodies) {
    let res: Awaited<ReturnType<typeof app.inject>> | undefined;
    const ms = await cpuMs(async () => {
      res = await app.inject({ method: 'POST', url: '/echo', headers: HEADERS, payload: body });
    });
    assert.equal(res?.statusCode, 200, `${body.slice(0, 40)}: ${res?.body.slice(0, 200)}`);
    assert.deepEqual(res.json().body, JSON.parse(JSON.stringify(JSON.parse(body))));
    assert.ok(ms < 2_000, `${body.slice(0, 40)}: ${Math.round(ms)} ms of CPU`);
  }
});
