import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { discoverConfig, noConfigFile } from '../../src/cli/discover-config.ts';

function dirWith(t: TestContext, files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-discover-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of files) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), 'port: 0\n');
  }
  return dir;
}

test('--config wins, found or not', (t: TestContext) => {
  t.assert.deepStrictEqual(discoverConfig('elsewhere.yaml', dirWith(t, ['app.yaml'])), { file: 'elsewhere.yaml', discovered: false });
});

test('app.yaml first, then config/app.yaml', (t: TestContext) => {
  t.assert.deepStrictEqual(discoverConfig(undefined, dirWith(t, ['app.yaml', 'config/app.yaml'])), { file: 'app.yaml', discovered: true });
  t.assert.deepStrictEqual(discoverConfig(undefined, dirWith(t, ['config/app.yaml'])), { file: 'config/app.yaml', discovered: true });
});

test('neither: undefined, and the message names both and the directory', (t: TestContext) => {
  const dir = dirWith(t, []);
  t.assert.strictEqual(discoverConfig(undefined, dir), undefined);
  t.assert.match(noConfigFile(dir), /neither app\.yaml nor config\/app\.yaml exists in .*flotilla-discover-.*--config/);
});
