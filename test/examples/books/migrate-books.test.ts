import { readdirSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { sampleBooks } from '../../../examples/books/book-repository.ts';
import { migrateBooks, migrationsOf, SEED_VERSION } from '../../../examples/books/database/migrate-books.ts';
import { SqliteDatabase } from '../../../examples/books/database/sqlite-database.ts';
import { sink } from '../../helpers/sink.ts';
import { sqliteFile } from './books-backends.ts';

const logger = () => pino(sink());

test('the SQL files of each backend: the same versions on both', (t: TestContext) => {
  const versions = (kind: 'sqlite' | 'postgres') =>
    readdirSync(migrationsOf(kind))
      .filter((name) => name.endsWith('.sql'))
      .sort();
  t.assert.deepStrictEqual(versions('sqlite'), versions('postgres'));
  t.assert.ok(versions('sqlite').includes('0001-books.sql'));
});

test("flotilla's migrate() applies the files once, and the seed goes in on the first run only, recorded beside them", async (t: TestContext) => {
  const file = sqliteFile(t);
  let seeded = 0;
  const seed = () => {
    seeded++;
    return sampleBooks(50);
  };
  const logs = sink();
  const first = SqliteDatabase.open(file, { busyTimeoutMs: 1_000 });
  t.assert.deepStrictEqual((await migrateBooks(first, { logger: pino(logs), seed })).applied, ['0001-books', SEED_VERSION]);
  await first.close();
  t.assert.deepStrictEqual(
    logs.lines.map((l) => l['msg']),
    ['migration 0001-books.sql applied', 'database migrated'],
  );

  // a later start (another process, the same file): nothing to do, and no warning about the seed's row
  const again = SqliteDatabase.open(file, { busyTimeoutMs: 1_000 });
  t.assert.deepStrictEqual((await migrateBooks(again, { logger: pino(logs), seed })).applied, []);
  t.assert.strictEqual(logs.lines.at(-1)?.['msg'], 'database schema up to date');
  t.assert.ok(!logs.lines.some((l) => l['level'] === 40), 'no warning');
  t.assert.strictEqual(seeded, 1);
  const [count] = await again.query<{ n: number }>('SELECT count(*) AS n FROM books');
  t.assert.strictEqual(count?.n, 50);
  const recorded = await again.query<{ version: string; checked: number }>(
    'SELECT version, checksum IS NOT NULL AS checked FROM schema_migrations ORDER BY version',
  );
  t.assert.deepStrictEqual(recorded, [
    { version: '0001-books', checked: 1 },
    { version: SEED_VERSION, checked: 0 },
  ]);
  await again.close();
});

test('a failing seed leaves the schema migrated and the seed unrecorded: the next start seeds', async (t: TestContext) => {
  const file = sqliteFile(t);
  const db = SqliteDatabase.open(file, { busyTimeoutMs: 1_000 });
  const broken = () => [{ ...sampleBooks(1)[0]!, title: null as unknown as string }]; // NOT NULL violated
  await t.assert.rejects(migrateBooks(db, { logger: logger(), seed: broken }), /NOT NULL/);
  t.assert.deepStrictEqual(await db.query('SELECT count(*) AS n FROM books'), [{ n: 0 }], 'the schema stays, with no book');
  t.assert.deepStrictEqual(await db.query('SELECT version FROM schema_migrations'), [{ version: '0001-books' }]);
  t.assert.deepStrictEqual((await migrateBooks(db, { logger: logger(), seed: () => sampleBooks(3) })).applied, [SEED_VERSION]);
  await db.close();
});

test('an aborted signal stops the start before the seed', async (t: TestContext) => {
  const db = SqliteDatabase.open(sqliteFile(t), { busyTimeoutMs: 1_000 });
  const signal = AbortSignal.abort(new Error('shutting down'));
  await t.assert.rejects(migrateBooks(db, { logger: logger(), seed: () => sampleBooks(3), signal }), /shutting down/);
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
