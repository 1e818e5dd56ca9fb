import { type TestContext, test } from 'node:test';
import { runCli } from '../../helpers/cli.ts';

test('flotilla config prints the example database URL redacted, and its settings with their defaults', async (t: TestContext) => {
  const url = 'postgres://books:hunter2@db:5432/books';
  // the example imports 'flotilla': its sources, as `npm start` resolves it
  const env = { ...process.env, DATABASE_URL: url, NODE_OPTIONS: '--conditions=source' };
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
  });
});
