import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { tempFiles } from '../helpers/cluster.ts';

const MIGRATE = pathToFileURL(join(import.meta.dirname, '../../src/migrations/migrate.ts')).href;

/** A file slow enough (a few hundred ms of inserts) that processes started together overlap on it. */
const SLOW = `CREATE TABLE numbers (n INTEGER PRIMARY KEY);
WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 300000) INSERT INTO numbers SELECT n FROM c;
`;

/** One process running migrate() on `file`; resolves with what it applied. */
async function migrateIn(dir: string, file: string): Promise<string[]> {
  const script = [
    `import { DatabaseSync } from 'node:sqlite';`,
    `import { migrate } from ${JSON.stringify(MIGRATE)};`,
    `const db = new DatabaseSync(${JSON.stringify(file)}, { timeout: 20_000 });`,
    `const { applied } = await migrate({ dir: ${JSON.stringify(dir)}, database: db });`,
    'process.stdout.write(JSON.stringify(applied));',
  ].join('\n');
  const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=source', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as string[];
}

test('processes sharing a SQLite file, started together: each file applied once, by one of them, none failing', async (t: TestContext) => {
  const dir = tempFiles(t, {
    '0001-numbers.sql': SLOW,
    '0002-squares.sql': 'CREATE TABLE squares AS SELECT n, n * n AS sq FROM numbers;',
    '0003-index.sql': 'CREATE INDEX squares_sq ON squares (sq);',
  });
  const file = join(dir, 'shared.sqlite');
  const runs = await Promise.all([1, 2, 3, 4].map(() => migrateIn(dir, file)));
  t.assert.deepStrictEqual(runs.flat().sort(), ['0001-numbers', '0002-squares', '0003-index'], JSON.stringify(runs));

  const db = new DatabaseSync(file, { readOnly: true });
  t.after(() => db.close());
  t.assert.deepStrictEqual({ ...db.prepare('SELECT count(*) AS n FROM numbers').get() }, { n: 300_000 });
  t.assert.deepStrictEqual({ ...db.prepare('SELECT count(*) AS n FROM schema_migrations').get() }, { n: 3 });
});
