import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { clusterYaml, tempFiles } from '../helpers/cluster.ts';

/** The environment of the runs: this one's, without NODE_ENV (its own tests set it). */
function envWith(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_ENV: _, ...rest } = process.env;
  return { ...rest, ...extra };
}

test('without --config: app.yaml, said in one line on stderr', async (t: TestContext) => {
  const dir = tempFiles(t, { 'app.yaml': clusterYaml({ serviceName: 'top' }) });
  mkdirSync(join(dir, 'config'));
  writeFileSync(join(dir, 'config/app.yaml'), clusterYaml({ serviceName: 'nested' }));
  const run = await runCli(['config'], { cwd: dir, env: envWith() });
  t.assert.strictEqual(run.code, 0, run.stderr);
  t.assert.strictEqual(JSON.parse(run.stdout).serviceName, 'top');
  t.assert.strictEqual(run.stderr, 'flotilla: using app.yaml (no --config given)\n');
});

test('without --config and app.yaml: config/app.yaml', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  mkdirSync(join(dir, 'config'));
  writeFileSync(join(dir, 'config/app.yaml'), clusterYaml({ serviceName: 'nested' }));
  const run = await runCli(['openapi'], { cwd: dir, env: envWith() });
  t.assert.strictEqual(run.code, 0, run.stderr);
  t.assert.strictEqual(JSON.parse(run.stdout).info.title, 'nested');
  t.assert.match(run.stderr, /^flotilla: using config\/app\.yaml \(no --config given\)\n/);
});

test('without --config and neither file: exit 2, both named', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const run = await runCli(['start'], { cwd: dir, env: envWith() });
  t.assert.strictEqual(run.code, 2);
  t.assert.match(run.stderr, /neither app\.yaml nor config\/app\.yaml exists/);
  t.assert.strictEqual(run.stdout, '');
});

test('env follows NODE_ENV when the file names none, else production as under flotilla start; the file wins', async (t: TestContext) => {
  const dir = tempFiles(t, { 'app.yaml': clusterYaml(), 'staging.yaml': clusterYaml({ env: 'staging' }) });
  const envOf = async (file: string, nodeEnv?: string) => {
    const run = await runCli(['config', '--config', join(dir, file)], { env: envWith(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }) });
    t.assert.strictEqual(run.code, 0, run.stderr);
    return JSON.parse(run.stdout).env as string;
  };
  // `flotilla config` reads the file as `flotilla start` would: production unless told otherwise
  t.assert.strictEqual(await envOf('app.yaml'), 'production');
  t.assert.strictEqual(await envOf('app.yaml', 'development'), 'development');
  t.assert.strictEqual(await envOf('app.yaml', 'test'), 'production', 'another NODE_ENV is ignored');
  t.assert.strictEqual(await envOf('staging.yaml', 'production'), 'staging');
});
