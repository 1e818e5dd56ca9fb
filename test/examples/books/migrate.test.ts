import { type TestContext, test } from 'node:test';
import { sampleBooks } from '../../../examples/books/book-repository.ts';
import { migrate, migrationFiles, SEED_VERSION } from '../../../examples/books/database/migrate.ts';
import { SqliteDatabase } from '../../../examples/books/database/sqlite-database.ts';
import { createLogger } from '../../../src/app/observability/logger.ts';
import { resolveConfig } from '../../../src/config/validate.ts';
import { sink } from '../../helpers/sink.ts';
import { sqliteFile } from './books-backends.ts';

const logger = () => createLogger(resolveConfig({ logging: { level: 'info' } }), sink());

test('the SQL files of each backend, in name order, the same versions on both', (t: TestContext) => {
  const sqlite = migrationFiles('sqlite').map((m) => m.version);
  const postgres = migrationFiles('postgres').map((m) => m.version);
  t.assert.deepStrictEqual(sqlite, [...sqlite].sort());
  t.assert.deepStrictEqual(sqlite, postgres);
  t.assert.ok(sqlite.includes('0001-books'));
});

test('migrations apply once, are recorded, and the seed goes in on the first run only', async (t: TestContext) => {
  const file = sqliteFile(t);
  let seeded = 0;
  const seed = () => {
    seeded++;
    return sampleBooks(50);
  };
  const first = SqliteDatabase.open(file, { busyTimeoutMs: 1_000 });
  t.assert.deepStrictEqual((await migrate(first, { logger: logger(), seed })).applied, ['0001-books', SEED_VERSION]);
  await first.close();

  // a later start (another process, the same file): nothing to do
  const again = SqliteDatabase.open(file, { busyTimeoutMs: 1_000 });
  t.assert.deepStrictEqual((await migrate(again, { logger: logger(), seed })).applied, []);
  t.assert.strictEqual(seeded, 1);
  const [count] = await again.query<{ n: number }>('SELECT count(*) AS n FROM books');
  t.assert.strictEqual(count?.n, 50);
  const recorded = await again.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
  t.assert.deepStrictEqual(
    recorded.map((r) => r.version),
    ['0001-books', SEED_VERSION],
  );
  await again.close();
});

test('a failing run leaves nothing behind: the next start tries it all again', async (t: TestContext) => {
  const file = sqliteFile(t);
  const db = SqliteDatabase.open(file, { busyTimeoutMs: 1_000 });
  const broken = () => [{ ...sampleBooks(1)[0]!, title: null as unknown as string }]; // NOT NULL violated
  await t.assert.rejects(migrate(db, { logger: logger(), seed: broken }), /NOT NULL/);
  const tables = await db.query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
  t.assert.deepStrictEqual(tables, [], 'the schema was rolled back with the seed');
  t.assert.deepStrictEqual((await migrate(db, { logger: logger(), seed: () => sampleBooks(3) })).applied, ['0001-books', SEED_VERSION]);
  await db.close();
});

test('SQLite: a statement whose signal has aborted does not run', async (t: TestContext) => {
  const db = SqliteDatabase.open(':memory:', { busyTimeoutMs: 1_000 });
  await db.query('CREATE TABLE t (x INTEGER)');
  const controller = new AbortController();
  controller.abort(new Error('the client left'));
  await t.assert.rejects(db.query('INSERT INTO t VALUES (1)', [], controller.signal), /the client left/);
  t.assert.deepStrictEqual(await db.query('SELECT count(*) AS n FROM t'), [{ n: 0 }]);
  await db.close();
});
