import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { FLOTILLA_ERRORS } from '../../src/errors/flotilla-error.ts';

const readme = readFileSync(join(resolve(import.meta.dirname, '../..'), 'README.md'), 'utf8');
const ROW = /^\| `(FLO_ERR_[A-Z0-9_]+)` \| (\w+) \|/gm;

test('every misuse code is in the README table with its class', () => {
  for (const [code, { base }] of Object.entries(FLOTILLA_ERRORS)) {
    assert.match(readme, new RegExp(`^\\| \`${code}\` \\| ${base.name} \\|`, 'm'), `${code} (${base.name}) is documented`);
  }
});

test('the README documents no misuse code that does not exist, and each once', () => {
  const documented = [...readme.matchAll(ROW)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(FLOTILLA_ERRORS).sort());
});
