import { type TestContext, test } from 'node:test';
import { runCli } from '../../helpers/cli.ts';

test('flotilla config prints the example database URL redacted, and its settings with their defaults', async (t: TestContext) => {
  const url = 'postgres://books:hunter2@db:5432/books';
  // the example imports 'flotilla': its sources, as `npm start` resolves it
  const secrets = { COOKIE_SECRET: 'a-cookie-secret-of-32-characters-at-least', BOOKS_API_KEY: 'key', BOOKS_READER_PASSWORD: 'pw' };
  const env = { ...process.env, DATABASE_URL: url, NODE_OPTIONS: '--conditions=source', NODE_ENV: '', ...secrets };
  const run = await runCli(['config', '--config', 'config/app.yaml'], { env });
  t.assert.strictEqual(run.code, 0, run.stderr);
  t.assert.doesNotMatch(run.stdout, /hunter2/);
  const printed = JSON.parse(run.stdout) as { settings: Record<string, unknown> };
  t.assert.deepStrictEqual(printed.settings, {
    databaseUrl: '[redacted]',
    databaseFile: 'data/books.sqlite',
    poolSize: 5,
    statementTimeoutMs: 5_000,
    seedBooks: 5_000,
    apiKey: '[redacted]',
    readerPassword: '[redacted]',
  });
});

test('flotilla config, read as flotilla start would (production), refuses the example without its secrets', async (t: TestContext) => {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '--conditions=source', NODE_ENV: '' };
  for (const name of ['COOKIE_SECRET', 'BOOKS_API_KEY', 'BOOKS_READER_PASSWORD', 'DATABASE_URL']) delete env[name];
  const run = await runCli(['config', '--config', 'config/app.yaml'], { env });
  t.assert.strictEqual(run.code, 2, run.stderr);
  for (const [key, variable] of [
    ['cookies.secrets[0]', 'COOKIE_SECRET'],
    ['settings.apiKey', 'BOOKS_API_KEY'],
    ['settings.readerPassword', 'BOOKS_READER_PASSWORD'],
  ] as const) {
    t.assert.match(
      run.stderr,
      new RegExp(
        `config/app\\.yaml:\\d+: ${key.replace(/[.[\]]/g, '\\$&')}: in production this secret must come from ${variable}, which is unset`,
      ),
    );
  }
  // as npm start runs it: development, nothing refused
  t.assert.strictEqual((await runCli(['config', '--config', 'config/app.yaml'], { env: { ...env, NODE_ENV: 'development' } })).code, 0);
});
