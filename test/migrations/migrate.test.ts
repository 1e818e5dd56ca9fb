import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import * as flotilla from '../../src/index.ts';
import { MigrationError, migrate } from '../../src/migrations/migrate.ts';
import { checksumOf } from '../../src/migrations/migration-files.ts';
import { tempFiles } from '../helpers/cluster.ts';
import { sink } from '../helpers/sink.ts';

/** A migrations folder holding `files`, and a SQLite database file beside it; both removed after the test. */
function setup(t: TestContext, files: Record<string, string>) {
  const dir = tempFiles(t, files);
  const db = new DatabaseSync(join(dir, 'app.sqlite'));
  t.after(() => db.close());
  const logs = sink();
  return { dir, db, logs, logger: pino(logs), tables: () => names(db) };
}

function names(db: DatabaseSync): string[] {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((r) => String(r['name']));
}

function rows(db: DatabaseSync, table = 'schema_migrations'): { version: string; checksum: string | null }[] {
  return db
    .prepare(`SELECT version, checksum FROM ${table} ORDER BY version`)
    .all()
    .map((r) => ({ version: String(r['version']), checksum: r['checksum'] as string | null }));
}

const BOOKS = 'CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL);\n';
const AUTHORS = 'CREATE TABLE authors (id INTEGER PRIMARY KEY);\nALTER TABLE books ADD COLUMN author_id INTEGER;\n';

test('the files apply in the order of their numbers, each recorded with its checksum; a second run applies nothing', async (t: TestContext) => {
  const { dir, db, logs, logger, tables } = setup(t, {
    '10-later.sql': 'CREATE TABLE later (x INTEGER);',
    '0002-authors.sql': AUTHORS,
    '0001-books.sql': BOOKS,
    'README.md': 'not a migration',
  });
  const first = await migrate({ dir, database: db, logger });
  t.assert.deepStrictEqual(first, { applied: ['0001-books', '0002-authors', '10-later'] });
  t.assert.deepStrictEqual(tables(), ['authors', 'books', 'later', 'schema_migrations']);
  t.assert.deepStrictEqual(rows(db), [
    { version: '0001-books', checksum: checksumOf(BOOKS) },
    { version: '0002-authors', checksum: checksumOf(AUTHORS) },
    { version: '10-later', checksum: checksumOf('CREATE TABLE later (x INTEGER);') },
  ]);
  t.assert.deepStrictEqual(
    logs.lines.map((l) => [l['msg'], l['migration']]),
    [
      ['migration 0001-books.sql applied', '0001-books'],
      ['migration 0002-authors.sql applied', '0002-authors'],
      ['migration 10-later.sql applied', '10-later'],
    ],
  );

  t.assert.deepStrictEqual(await migrate({ dir, database: db, logger }), { applied: [] });
  t.assert.strictEqual(logs.lines.length, 3, 'nothing logged by a run with nothing to do');
});

test('a new file is applied by the next run; a file URL works as the folder', async (t: TestContext) => {
  const { dir, db, tables } = setup(t, { '0001-books.sql': BOOKS });
  const url = pathToFileURL(`${dir}/`);
  t.assert.deepStrictEqual((await migrate({ dir: url, database: db })).applied, ['0001-books']);
  writeFileSync(join(dir, '0002-authors.sql'), AUTHORS);
  t.assert.deepStrictEqual((await migrate({ dir: url, database: db })).applied, ['0002-authors']);
  t.assert.deepStrictEqual(tables(), ['authors', 'books', 'schema_migrations']);
});

test('a failing file: a MigrationError naming it, the files before it kept, nothing of it left; the next run resumes there', async (t: TestContext) => {
  const { dir, db, tables } = setup(t, {
    '0001-books.sql': BOOKS,
    '0002-broken.sql': 'CREATE TABLE half (x INTEGER);\nINSERT INTO nowhere VALUES (1);\n',
    '0003-after.sql': 'CREATE TABLE after_it (x INTEGER);',
  });
  const error = await migrate({ dir, database: db }).then(
    () => t.assert.fail('the run succeeded'),
    (e: unknown) => e,
  );
  t.assert.ok(error instanceof MigrationError);
  t.assert.strictEqual(error.message, 'migration 0002-broken.sql failed: no such table: nowhere');
  t.assert.deepStrictEqual(
    [error.name, error.file, error.version, error.path],
    ['MigrationError', '0002-broken.sql', '0002-broken', join(dir, '0002-broken.sql')],
  );
  t.assert.match(String((error.cause as Error).message), /no such table/);
  t.assert.deepStrictEqual(tables(), ['books', 'schema_migrations'], 'the half-made table went with the failed transaction');
  t.assert.deepStrictEqual(
    rows(db).map((r) => r.version),
    ['0001-books'],
  );

  writeFileSync(join(dir, '0002-broken.sql'), 'CREATE TABLE half (x INTEGER);\n');
  t.assert.deepStrictEqual((await migrate({ dir, database: db })).applied, ['0002-broken', '0003-after']);
});

test('-- flotilla: no-transaction: a file runs outside a transaction (VACUUM refuses one), then is recorded', async (t: TestContext) => {
  const vacuum = '-- flotilla: no-transaction\nCREATE TABLE scratch (x INTEGER);\nDROP TABLE scratch;\nVACUUM;\n';
  const { dir, db } = setup(t, { '0001-books.sql': BOOKS, '0002-vacuum.sql': vacuum });
  t.assert.deepStrictEqual((await migrate({ dir, database: db })).applied, ['0001-books', '0002-vacuum']);
  t.assert.deepStrictEqual(rows(db), [
    { version: '0001-books', checksum: checksumOf(BOOKS) },
    { version: '0002-vacuum', checksum: checksumOf(vacuum) },
  ]);
  t.assert.deepStrictEqual((await migrate({ dir, database: db })).applied, [], 'recorded: not run again');

  // the same statements in a transaction: SQLite refuses the VACUUM
  const plain = setup(t, { '0001-vacuum.sql': vacuum.replace('-- flotilla: no-transaction\n', '') });
  await t.assert.rejects(
    migrate({ dir: plain.dir, database: plain.db }),
    /migration 0001-vacuum\.sql failed: cannot VACUUM from within a transaction/,
  );
});

test('a no-transaction file that fails halfway: what ran before stays, the file is not recorded, the next run starts it again', async (t: TestContext) => {
  const { dir, db, tables } = setup(t, {
    '0001-books.sql': BOOKS,
    '0002-halfway.sql': '-- flotilla: no-transaction\nCREATE TABLE half (x INTEGER);\nINSERT INTO nowhere VALUES (1);\n',
  });
  const error = await migrate({ dir, database: db }).then(
    () => t.assert.fail('the run succeeded'),
    (e: unknown) => e,
  );
  t.assert.ok(error instanceof MigrationError);
  t.assert.strictEqual(
    error.message,
    'migration 0002-halfway.sql failed: no such table: nowhere (outside a transaction: what ran before it stays, the file is not recorded)',
  );
  t.assert.deepStrictEqual(tables(), ['books', 'half', 'schema_migrations'], 'not rolled back');
  t.assert.deepStrictEqual(
    rows(db).map((r) => r.version),
    ['0001-books'],
  );

  // run again from its first statement: written to run twice, it completes
  writeFileSync(
    join(dir, '0002-halfway.sql'),
    '-- flotilla: no-transaction\nCREATE TABLE IF NOT EXISTS half (x INTEGER);\nINSERT INTO half VALUES (1);\n',
  );
  t.assert.deepStrictEqual((await migrate({ dir, database: db })).applied, ['0002-halfway']);
  t.assert.deepStrictEqual({ ...db.prepare('SELECT count(*) AS n FROM half').get() }, { n: 1 });
});

test('a file edited after it was applied, and a recorded version whose file is gone: warnings, no failure', async (t: TestContext) => {
  const { dir, db, logs, logger } = setup(t, { '0001-books.sql': BOOKS, '0002-authors.sql': AUTHORS });
  await migrate({ dir, database: db, logger });
  writeFileSync(join(dir, '0001-books.sql'), `-- a comment added later\n${BOOKS}`);
  rmSync(join(dir, '0002-authors.sql'));
  t.assert.deepStrictEqual((await migrate({ dir, database: db, logger })).applied, []);
  const warnings = logs.lines.filter((l) => l['level'] === 40);
  t.assert.deepStrictEqual(
    warnings.map((l) => [l['msg'], l['migration']]),
    [
      ['migration 0002-authors is recorded in schema_migrations but its file is gone', '0002-authors'],
      ['migration 0001-books.sql changed after it was applied: not applied again', '0001-books'],
    ],
  );
  t.assert.deepStrictEqual(rows(db)[0], { version: '0001-books', checksum: checksumOf(BOOKS) }, 'the checksum of what was applied is kept');
});

test('line endings and a byte-order mark do not change a checksum', async (t: TestContext) => {
  const { dir, db, logs, logger } = setup(t, { '0001-books.sql': BOOKS });
  await migrate({ dir, database: db, logger });
  writeFileSync(join(dir, '0001-books.sql'), `\uFEFF${BOOKS.replace(/\n/g, '\r\n')}`);
  await migrate({ dir, database: db, logger });
  t.assert.deepStrictEqual(
    logs.lines.filter((l) => l['level'] === 40),
    [],
  );
});

test("a table another runner created (version, applied_at) is adopted: its files skipped, their checksums recorded, a step the service's code recorded left alone", async (t: TestContext) => {
  const { dir, db, logs, logger } = setup(t, { '0001-books.sql': BOOKS, '0002-authors.sql': AUTHORS });
  db.exec(BOOKS);
  db.exec('CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at text NOT NULL)');
  db.exec("INSERT INTO schema_migrations VALUES ('0001-books', '2024-01-01T00:00:00Z'), ('seed-books', '2024-01-01T00:00:01Z')");
  t.assert.deepStrictEqual((await migrate({ dir, database: db, logger })).applied, ['0002-authors']);
  t.assert.deepStrictEqual(rows(db), [
    { version: '0001-books', checksum: checksumOf(BOOKS) },
    { version: '0002-authors', checksum: checksumOf(AUTHORS) },
    { version: 'seed-books', checksum: null },
  ]);
  t.assert.deepStrictEqual(
    logs.lines.filter((l) => l['level'] === 40),
    [],
  );
});

test('table: another name, in an attached schema too', async (t: TestContext) => {
  const { dir, db, tables } = setup(t, { '0001-books.sql': BOOKS });
  t.assert.deepStrictEqual((await migrate({ dir, database: db, table: 'main.books_migrations' })).applied, ['0001-books']);
  t.assert.deepStrictEqual(tables(), ['books', 'books_migrations']);
  t.assert.deepStrictEqual(
    rows(db, 'books_migrations').map((r) => r.version),
    ['0001-books'],
  );
});

test('an aborted signal stops the run before the next file', async (t: TestContext) => {
  const { dir, db, tables } = setup(t, { '0001-books.sql': BOOKS, '0002-authors.sql': AUTHORS });
  const controller = new AbortController();
  const logger = {
    info: () => controller.abort(new Error('shutting down')),
    warn: () => {},
  };
  await t.assert.rejects(migrate({ dir, database: db, logger, signal: controller.signal }), /shutting down/);
  t.assert.deepStrictEqual(tables(), ['books', 'schema_migrations']);
  await t.assert.rejects(migrate({ dir, database: db, signal: AbortSignal.abort(new Error('already')) }), /already/);
});

test("a connection inside its caller's transaction is refused, and the caller's transaction is left as it was", async (t: TestContext) => {
  const { dir, db, tables } = setup(t, { '0001-books.sql': BOOKS });
  db.exec('CREATE TABLE mine (x INTEGER)');
  db.exec('BEGIN');
  db.exec('INSERT INTO mine VALUES (1)');
  await t.assert.rejects(migrate({ dir, database: db }), /the SQLite connection is inside a transaction/);
  t.assert.ok(db.isTransaction);
  db.exec('COMMIT');
  t.assert.deepStrictEqual({ ...db.prepare('SELECT count(*) AS n FROM mine').get() }, { n: 1 });
  t.assert.deepStrictEqual(tables(), ['mine']);
});

test('without a logger, warnings are process warnings', async (t: TestContext) => {
  const { dir, db } = setup(t, { '0001-books.sql': BOOKS });
  await migrate({ dir, database: db });
  rmSync(join(dir, '0001-books.sql'));
  const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
  await migrate({ dir, database: db });
  const warning = await warned;
  t.assert.deepStrictEqual(
    [warning.name, warning.message],
    ['MigrationWarning', 'migration 0001-books is recorded in schema_migrations but its file is gone'],
  );
});

test('misuse: a clear FlotillaError for the database, the folder, the table, the lock key', async (t: TestContext) => {
  const { dir, db } = setup(t, {});
  const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
  await t.assert.rejects(migrate({ dir, database: 'postgres://db' as never }), code('FLO_ERR_BAD_MIGRATE_OPTION'));
  await t.assert.rejects(
    migrate({ dir, database: undefined as never }),
    /database must be a pg Pool or Client, or a node:sqlite DatabaseSync/,
  );
  await t.assert.rejects(migrate({ dir: 42 as never, database: db }), /dir must be a path or a file: URL/);
  await t.assert.rejects(migrate({ dir, database: db, table: 'x; DROP TABLE y' }), /table must be a table name/);
  await t.assert.rejects(migrate({ dir, database: db, lockKey: 2 ** 63 }), /lockKey must be a safe integer or a bigint within int64/);
  await t.assert.rejects(migrate({ dir: join(dir, 'missing'), database: db }), code('FLO_ERR_MIGRATIONS_DIRECTORY'));
  writeFileSync(join(dir, 'books.sql'), BOOKS);
  await t.assert.rejects(migrate({ dir, database: db }), /books\.sql is not named like 0001-name\.sql/);
  rmSync(join(dir, 'books.sql'));
  writeFileSync(join(dir, '0001_books.down.sql'), 'DROP TABLE books;');
  await t.assert.rejects(migrate({ dir, database: db }), /0001_books\.down\.sql is a down migration/);
  t.assert.deepStrictEqual(names(db), [], 'nothing touched');
});

test('exported from the package', (t: TestContext) => {
  t.assert.strictEqual(flotilla.migrate, migrate);
  t.assert.strictEqual(flotilla.MigrationError, MigrationError);
});
