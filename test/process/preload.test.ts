import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadConfigFile } from '../../src/config/load-file.ts';
import { importPreloads, PreloadError } from '../../src/process/preload.ts';
import { tempFiles } from '../helpers/cluster.ts';

test('importPreloads imports each module in order; a throw is a PreloadError naming the module', async (t: TestContext) => {
  const dir = tempFiles(t, {
    'a.mjs': 'globalThis.preloaded = [...(globalThis.preloaded ?? []), "a"];\n',
    'b.mjs': 'globalThis.preloaded = [...(globalThis.preloaded ?? []), "b"];\n',
    'bad.mjs': 'throw new Error("no collector configured");\n',
  });
  await importPreloads([join(dir, 'b.mjs'), join(dir, 'a.mjs')]);
  t.assert.deepStrictEqual((globalThis as { preloaded?: string[] }).preloaded, ['b', 'a']);
  await t.assert.rejects(importPreloads([join(dir, 'bad.mjs')]), (error: unknown) => {
    t.assert.ok(error instanceof PreloadError);
    t.assert.strictEqual(error.path, join(dir, 'bad.mjs'));
    t.assert.match(error.message, /bad\.mjs failed: Error: no collector configured/);
    return true;
  });
});

test('preload: paths relative to the YAML file, resolved; a missing one is a problem with its line', (t: TestContext) => {
  const dir = tempFiles(t, { 'otel.mjs': '', 'app.yaml': 'port: 0\npreload:\n  - ./otel.mjs\n  - ./missing.mjs\n' });
  t.assert.throws(() => loadConfigFile(join(dir, 'app.yaml')), /app\.yaml:4: preload\[1\]: .*missing\.mjs does not exist/);
  const ok = tempFiles(t, { 'otel.mjs': '', 'app.yaml': 'port: 0\npreload: [./otel.mjs]\n' });
  t.assert.deepStrictEqual(loadConfigFile(join(ok, 'app.yaml')).config.preload, [join(ok, 'otel.mjs')]);
});
