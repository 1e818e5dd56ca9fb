import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { FLOTILLA_ERRORS } from '../../src/errors/flotilla-error.ts';

const reference = readFileSync(join(resolve(import.meta.dirname, '../..'), 'docs/reference/errors.md'), 'utf8');
const ROW = /^\| `(FLO_ERR_[A-Z0-9_]+)` \| (\w+) \|/gm;

test("every misuse code is in the errors reference's table with its class", () => {
  for (const [code, { base }] of Object.entries(FLOTILLA_ERRORS)) {
    assert.match(reference, new RegExp(`^\\| \`${code}\` \\| ${base.name} \\|`, 'm'), `${code} (${base.name}) is documented`);
  }
});

test('the errors reference documents no misuse code that does not exist, and each once', () => {
  const documented = [...reference.matchAll(ROW)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(FLOTILLA_ERRORS).sort());
});
