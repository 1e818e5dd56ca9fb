import { type TestContext, test } from 'node:test';
import { splitStatements } from '../../src/migrations/sql-statements.ts';

const texts = (sql: string) => splitStatements(sql).map((s) => s.text);

test('cut at each ;, blanks and comment-only pieces left out, each with its offset in the file', (t: TestContext) => {
  const sql = '-- flotilla: no-transaction\nCREATE INDEX CONCURRENTLY a ON t (x);\n\n  SELECT 1 ;\n-- the end\n;\n';
  const statements = splitStatements(sql);
  t.assert.deepStrictEqual(
    statements.map((s) => s.text),
    ['CREATE INDEX CONCURRENTLY a ON t (x)', 'SELECT 1'],
  );
  for (const s of statements) t.assert.strictEqual(sql.slice(s.offset, s.offset + s.text.length), s.text);
  t.assert.deepStrictEqual(texts('SELECT 1'), ['SELECT 1'], 'the last statement needs no ;');
  t.assert.deepStrictEqual(texts(''), []);
});

test('a ; inside a string, a quoted identifier, a dollar-quoted body or a comment does not end a statement', (t: TestContext) => {
  t.assert.deepStrictEqual(texts("SELECT 'a;b', 'it''s;'; SELECT 2"), ["SELECT 'a;b', 'it''s;'", 'SELECT 2']);
  t.assert.deepStrictEqual(texts("SELECT E'x\\';y', e'\\\\'; SELECT 2"), ["SELECT E'x\\';y', e'\\\\'", 'SELECT 2']);
  t.assert.deepStrictEqual(texts('SELECT "a;""b"; SELECT 2'), ['SELECT "a;""b"', 'SELECT 2']);
  t.assert.deepStrictEqual(texts('DO $$ BEGIN PERFORM 1; END $$; SELECT 2'), ['DO $$ BEGIN PERFORM 1; END $$', 'SELECT 2']);
  t.assert.deepStrictEqual(texts('DO $fn$ a; $$ b; $fn$; SELECT 2'), ['DO $fn$ a; $$ b; $fn$', 'SELECT 2']);
  t.assert.deepStrictEqual(texts('SELECT 1 /* a; /* nested; */ b; */; SELECT 2 -- c; d\n'), [
    'SELECT 1 /* a; /* nested; */ b; */',
    'SELECT 2 -- c; d',
  ]);
  t.assert.deepStrictEqual(
    texts('SELECT $1, a$b$c; SELECT 2'),
    ['SELECT $1, a$b$c', 'SELECT 2'],
    'neither a parameter nor an identifier opens a body',
  );
});

test('a text cut short (an unclosed string, body or comment) is one statement, for the server to refuse', (t: TestContext) => {
  t.assert.deepStrictEqual(texts("SELECT 'open; SELECT 2"), ["SELECT 'open; SELECT 2"]);
  t.assert.deepStrictEqual(texts('DO $$ open; SELECT 2'), ['DO $$ open; SELECT 2']);
  t.assert.deepStrictEqual(texts('SELECT 1; /* open; SELECT 2'), ['SELECT 1']);
});
