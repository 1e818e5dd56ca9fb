import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ERROR_CODES } from '../../src/errors/codes.ts';

const reference = readFileSync(join(resolve(import.meta.dirname, '../..'), 'docs/reference/errors.md'), 'utf8');

test("every error code is in the errors reference's table with its status", () => {
  for (const [code, { status }] of Object.entries(ERROR_CODES)) {
    assert.match(reference, new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'), `${code} (${status}) is documented`);
  }
});

test('the errors reference documents no code that does not exist', () => {
  const documented = [...reference.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| (\d{3}) \|/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(ERROR_CODES).sort());
});
