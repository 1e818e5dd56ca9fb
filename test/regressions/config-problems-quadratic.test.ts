import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfigText } from '../../src/config/load-file.ts';
import { cpuMs } from '../helpers/timing.ts';

/**
 * What broke: reporting the problems of a config file took time quadratic in
 * their number — every validation problem was compared with every problem the
 * YAML reading had found, and yaml's pretty errors copied the whole source line
 * into each message. 40 000 refused tags (0.5 MB) took over 20 s; a 1 MiB file
 * could take minutes. Such files now fail in about a second.
 */

async function problemsOf(text: string): Promise<{ count: number; ms: number; first: string }> {
  let caught: unknown;
  const ms = await cpuMs(() => {
    try {
      parseConfigText(text, 'big.yaml', {});
    } catch (error) {
      caught = error;
    }
  });
  assert.ok(caught instanceof ConfigError, 'expected a ConfigError');
  return { count: caught.problems.length, ms, first: caught.message.split('\n')[1] ?? '' };
}

const N = 30_000;
/** CPU time before the fix: 12 s and 20 s; after it: about 1 s each. */
const BUDGET_MS = 4_000;

test('many refused tags, one per key: every one reported, in linear time', async () => {
  const { count, ms, first } = await problemsOf(Array.from({ length: N }, (_, i) => `k${i}: !t 1`).join('\n'));
  assert.equal(count, N);
  assert.equal(first, '  - big.yaml:1: k0: tag !t is not allowed; a config file holds plain YAML values only');
  assert.ok(ms < BUDGET_MS, `${Math.round(ms)} ms of CPU`);
});

test('many errors on one long line: located by column, in linear time', async () => {
  const { count, ms, first } = await problemsOf(`docs:\n  servers: [${Array.from({ length: N }, () => '!t 1').join(',')}]`);
  assert.equal(count, N + 1);
  assert.match(first, /^ {2}- big\.yaml:2: docs\.servers\[0\]: tag !t is not allowed/);
  assert.ok(ms < BUDGET_MS, `${Math.round(ms)} ms of CPU`);
});
