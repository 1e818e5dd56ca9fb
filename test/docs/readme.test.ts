import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type TestContext, test } from 'node:test';

// The README stays short and sends a newcomer to the tutorial before any other page.

const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

test('the README is at most 250 lines', (t: TestContext) => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  t.assert.ok(lines <= 250, `${lines} lines`);
});

test('the README opens with its two commands and links the tutorial before any other page', (t: TestContext) => {
  const commands = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  t.assert.match(commands, /^npm install && npm start\b/m);
  t.assert.match(commands, /^npm install && npm test\b/m);
  const first = /\]\(((?:docs|examples|bench)\/[^)#]+)/.exec(readme)?.[1];
  t.assert.strictEqual(first, 'docs/tutorial/README.md');
});
