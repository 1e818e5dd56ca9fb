// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.ts';
import { tempFiles } from '../helpers/cluster.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/settings/secret-service.ts', import.meta.url));

/** A config whose settings read a secret from the environment. */
function secretConfig(t: TestContext, poolSize = '${POOL_SIZE:-10}'): string {
  const yaml = [
    'serviceName: books',
    'port: 0',
    `service: ${JSON.stringify(SERVICE)}`,
    'settings:',
    '  databaseUrl: ${DATABASE_URL}',
    `  poolSize: ${poolSize}`,
    '',
  ].join('\n');
  return join(tempFiles(t, { 'app.yaml': yaml }), 'app.yaml');
}

/** This process's environment without the variables the config reads. */
function envWithout(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, POOL_SIZE: __, NODE_ENV: ___, ...rest } = process.env;
  return { ...rest, ...extra };
}

test('openapi with a secret unset: exit 0, the document, the setup run without the key', async (t: TestContext) => {
  const file = secretConfig(t);
  const run = await runCli(['openapi', '--config', file], { env: envWithout() });
  t.assert.strictEqual(run.code, 0, run.stderr);
  const doc = JSON.parse(run.stdout) as { paths: Record<string, { get: { summary: string } }> };
  t.assert.strictEqual(doc.paths['/books']?.get.summary, 'databaseUrl absent, poolSize 10');
  t.assert.match(run.stderr, /without the unset environment variables DATABASE_URL/);
});

test('openapi with the secret set: the setup sees it', async (t: TestContext) => {
  const file = secretConfig(t);
  const run = await runCli(['openapi', '--config', file], { env: envWithout({ DATABASE_URL: 'postgres://db/books' }) });
  t.assert.strictEqual(run.code, 0, run.stderr);
  t.assert.strictEqual(JSON.parse(run.stdout).paths['/books'].get.summary, 'databaseUrl present, poolSize 10');
  t.assert.strictEqual(run.stderr, '');
});

test('openapi still refuses settings that are wrong, not merely unset', async (t: TestContext) => {
  const file = secretConfig(t, '0');
  const run = await runCli(['openapi', '--config', file], { env: envWithout() });
  t.assert.strictEqual(run.code, 2);
  t.assert.match(run.stderr, /app\.yaml:6: settings\.poolSize: must be >= 1/);
  t.assert.doesNotMatch(run.stderr, /databaseUrl/);
});

test('config names each unset variable with its line, shows where it goes, and exits 2', async (t: TestContext) => {
  const file = secretConfig(t);
  const run = await runCli(['config', '--config', file], { env: envWithout() });
  t.assert.strictEqual(run.code, 2);
  const shown = JSON.parse(run.stdout) as { settings: Record<string, unknown> };
  t.assert.deepStrictEqual(shown.settings, { databaseUrl: '[unset: DATABASE_URL]', poolSize: 10 });
  t.assert.strictEqual(run.stderr, `flotilla: ${file}:5: settings.databaseUrl: environment variable DATABASE_URL is not set\n`);
});

test('start refuses the same file: a cluster never serves without its settings', async (t: TestContext) => {
  const file = secretConfig(t);
  const run = await runCli(['start', '--config', file], { env: envWithout() });
  t.assert.strictEqual(run.code, 2);
  t.assert.match(run.stderr, /app\.yaml:5: settings\.databaseUrl: environment variable DATABASE_URL is not set/);
});
