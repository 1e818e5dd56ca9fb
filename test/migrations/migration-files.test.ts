import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { checksumOf, readMigrations } from '../../src/migrations/migration-files.ts';
import { tempFiles } from '../helpers/cluster.ts';

test('the .sql files in the order of their numbers, then names; other files and sub-folders left alone', (t: TestContext) => {
  const dir = tempFiles(t, {
    '10-ten.sql': '',
    '9-nine.sql': '',
    '0002_b.sql': '',
    '0002-a.sql': '',
    '20240612093000_timestamped.sql': '',
    'notes.txt': '',
    '0003-not-sql.sql.bak': '',
  });
  mkdirSync(join(dir, '0004-folder.sql'));
  mkdirSync(join(dir, 'archive'));
  writeFileSync(join(dir, 'archive', 'old.sql'), 'DROP TABLE everything;');
  t.assert.deepStrictEqual(
    readMigrations(dir).map((m) => m.name),
    ['0002-a.sql', '0002_b.sql', '9-nine.sql', '10-ten.sql', '20240612093000_timestamped.sql'],
  );
});

test('each file: its version, path, text without a byte-order mark, and a checksum blind to line endings', (t: TestContext) => {
  const dir = tempFiles(t, { '0001-books.sql': '\uFEFFCREATE TABLE books (id integer);\r\n' });
  symlinkSync(join(dir, '0001-books.sql'), join(dir, '0002-linked.sql'));
  const [books, linked] = readMigrations(dir);
  t.assert.deepStrictEqual(books, {
    name: '0001-books.sql',
    version: '0001-books',
    path: join(dir, '0001-books.sql'),
    sql: 'CREATE TABLE books (id integer);\r\n',
    checksum: checksumOf('CREATE TABLE books (id integer);\n'),
    transaction: true,
  });
  t.assert.strictEqual(linked?.version, '0002-linked', 'a symbolic link to a file counts');
});

test('an empty folder has no migrations', (t: TestContext) => {
  t.assert.deepStrictEqual(readMigrations(tempFiles(t, {})), []);
});

test('-- flotilla: no-transaction among the comments that open a file: it runs outside a transaction', (t: TestContext) => {
  const dir = tempFiles(t, {
    '0001-first-line.sql': '-- flotilla: no-transaction\nCREATE INDEX CONCURRENTLY books_title ON books (title);\n',
    '0002-after-a-header.sql': '\n-- Copyright the authors\n--   FLOTILLA:no-transaction  \r\nVACUUM books;\n',
    '0003-in-the-body.sql': 'CREATE TABLE t (x integer);\n-- flotilla: no-transaction\n',
    '0004-plain.sql': '-- an index\nCREATE INDEX books_title ON books (title);\n',
  });
  t.assert.deepStrictEqual(
    readMigrations(dir).map((m) => [m.version, m.transaction]),
    [
      ['0001-first-line', false],
      ['0002-after-a-header', false],
      ['0003-in-the-body', true],
      ['0004-plain', true],
    ],
  );
});

test('another -- flotilla: directive is an error naming the file, not a file run in a transaction by mistake', (t: TestContext) => {
  const dir = tempFiles(t, { '0001-typo.sql': '-- flotilla: no-transactions\nVACUUM;\n' });
  t.assert.throws(() => readMigrations(dir), {
    code: 'FLO_ERR_MIGRATIONS_DIRECTORY',
    message: /0001-typo\.sql says '-- flotilla: no-transactions', which is not a directive/,
  });
});
