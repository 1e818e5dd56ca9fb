import { type TestContext, test } from 'node:test';
import { siblingsFor } from '../../../src/app/static/precompressed.ts';

const ALL = ['br', 'zstd', 'gzip'] as const;

test('the siblings a request takes, best first, the mount order breaking ties', (t: TestContext) => {
  t.assert.deepStrictEqual(siblingsFor('gzip, deflate, br, zstd', ALL, 'app.js'), ['br', 'zstd', 'gzip']);
  t.assert.deepStrictEqual(siblingsFor('gzip, br', ALL, 'app.js'), ['br', 'gzip']);
  t.assert.deepStrictEqual(siblingsFor('gzip', ALL, 'app.js'), ['gzip']);
  t.assert.deepStrictEqual(siblingsFor('br;q=0.5, gzip', ALL, 'app.js'), ['gzip', 'br']);
  t.assert.deepStrictEqual(siblingsFor('gzip, br', ['gzip', 'br'], 'app.js'), ['gzip', 'br']);
  // `*` takes what every client decodes: gzip first, then br; zstd only when a client names it
  t.assert.deepStrictEqual(siblingsFor('*', ALL, 'app.js'), ['gzip', 'br']);
});

test('none without Accept-Encoding, for refused codings, or when the mount offers none', (t: TestContext) => {
  t.assert.deepStrictEqual(siblingsFor(undefined, ALL, 'app.js'), []);
  t.assert.deepStrictEqual(siblingsFor('', ALL, 'app.js'), []);
  t.assert.deepStrictEqual(siblingsFor('identity', ALL, 'app.js'), []);
  t.assert.deepStrictEqual(siblingsFor('br;q=0, gzip;q=0', ALL, 'app.js'), []);
  t.assert.deepStrictEqual(siblingsFor('gzip', [], 'app.js'), []);
  // the client would rather have the file as it is than gzip
  t.assert.deepStrictEqual(siblingsFor('gzip;q=0.2, identity', ALL, 'app.js'), []);
});

test('a compressed file asked for by name gets no sibling of its own', (t: TestContext) => {
  for (const name of ['app.js.gz', 'app.js.br', 'app.js.zst']) t.assert.deepStrictEqual(siblingsFor('gzip, br, zstd', ALL, name), []);
});
