import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bodyApp, MULTIPART_TYPE, multipart } from '../app/bodies/harness.ts';

/**
 * Forms and multipart bodies, property-tested through `inject`. Forms: names
 * built from prototype-reaching segments in bracket and dot notation, percent-
 * encoded or not, are refused (400) exactly when they expand to `__proto__` or
 * `constructor.prototype`, else read exactly; `Object.prototype` stays
 * untouched. Multipart: valid bodies mangled anywhere (cut, bytes flipped,
 * boundary-like text inserted) get a 200, 400 or 413 — never a 5xx, never a hang.
 */

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SEGMENTS = ['__proto__', 'constructor', 'prototype', 'polluted', 'toString', 'hasOwnProperty', 'a', ''];

const name = fc.record({
  segments: fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 }),
  notation: fc.constantFrom('bracket', 'dot'),
  encoding: fc.constantFrom('plain', 'component', 'every'),
});

type Name = { segments: string[]; notation: string; encoding: string };

function spell(n: Name): string {
  const [first = '', ...rest] = n.segments;
  return n.notation === 'bracket' ? first + rest.map((s) => `[${s}]`).join('') : [first, ...rest].join('.');
}

function encode(text: string, encoding: string): string {
  if (encoding === 'plain') return text.replace(/[&=+%#]/g, (c) => encodeURIComponent(c));
  if (encoding === 'component') return encodeURIComponent(text);
  return [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/** The oracle, from the segments the name was built of (empty ones, `a[]`, do not count). */
function forbidden(n: Name): boolean {
  const segments = n.segments.filter((s) => s !== '');
  return segments.some((s, i) => s === '__proto__' || (s === 'constructor' && segments[i + 1] === 'prototype'));
}

test('forms with names that reach for prototypes: refused exactly when they expand to one, else read exactly', async () => {
  const app = bodyApp([{ path: '/form', options: { kind: 'form', limit: 1 << 20 } }]);
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(name, fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 6 }), async (pairs) => {
      const payload = pairs.map(([n, value]) => `${encode(spell(n), n.encoding)}=${encodeURIComponent(value)}`).join('&');
      const res = await app.inject({ method: 'POST', url: '/form', headers: FORM, payload });
      if (pairs.some(([n]) => forbidden(n))) {
        assert.equal(res.statusCode, 400, payload);
        assert.equal(res.json().code, 'FORBIDDEN_KEY');
        return;
      }
      assert.equal(res.statusCode, 200, `${payload}: ${res.body}`);
      const expected = new Map<string, string | string[]>();
      for (const [n, value] of pairs) {
        const key = spell(n);
        const seen = expected.get(key);
        expected.set(key, seen === undefined ? value : typeof seen === 'string' ? [seen, value] : [...seen, value]);
      }
      assert.deepEqual(res.json().form, Object.fromEntries(expected));
    }),
    { numRuns: 400 },
  );
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);
});

test('mangled multipart bodies: a 200, 400 or 413, never a 5xx', async () => {
  const app = bodyApp([
    { path: '/streamed', options: { kind: 'multipart', limit: 64 * 1024, multipart: { files: 3, fields: 5, fieldBytes: 1024 } } },
    { path: '/buffered', options: { kind: 'multipart', limit: 64 * 1024, multipart: { buffer: true, files: 3, fields: 5 } } },
  ]);
  const valid = multipart([
    { name: 'title', value: 'Dune' },
    { name: 'cover', filename: 'cover.png', content: Buffer.alloc(3000, 0x89), type: 'image/png' },
    { name: 'tags', value: 'sf' },
    { name: 'notes', filename: 'notes.txt', content: 'hello\r\nworld', type: 'text/plain' },
  ]);
  const inserts = ['', '\r\n', '\r\n\r\n', '--', '\r\n--flotilla-test-boundary', '\r\n--flotilla-test-boundary--', '"', ';', '\0', '\xff'];
  const mangle = fc.record({
    cutAt: fc.option(fc.nat(), { nil: undefined }),
    flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
    insertAt: fc.nat(),
    insert: fc.constantFrom(...inserts),
    repeat: fc.integer({ min: 1, max: 50 }),
    url: fc.constantFrom('/streamed', '/buffered'),
  });
  await fc.assert(
    fc.asyncProperty(mangle, async (m) => {
      let body = Buffer.from(valid);
      for (const [at, byte] of m.flips) body[at % body.length] = byte;
      const at = m.insertAt % (body.length + 1);
      body = Buffer.concat([body.subarray(0, at), Buffer.from(m.insert.repeat(m.repeat), 'latin1'), body.subarray(at)]);
      if (m.cutAt !== undefined) body = body.subarray(0, m.cutAt % (body.length + 1));
      const res = await app.inject({ method: 'POST', url: m.url, headers: { 'content-type': MULTIPART_TYPE }, payload: body });
      assert.ok([200, 400, 413].includes(res.statusCode), `${res.statusCode} ${res.body}`);
      if (res.statusCode !== 200) assert.equal(res.headers['content-type'], 'application/problem+json');
    }),
    { numRuns: 300 },
  );
});
