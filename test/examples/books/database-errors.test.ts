import { DatabaseSync } from 'node:sqlite';
import { type TestContext, test } from 'node:test';
import { databaseProblem, failureOf } from '../../../examples/books/database/database-errors.ts';
import { KError } from '../../../src/errors/k-error.ts';

const pgError = (code: string, message = 'from the server') => Object.assign(new Error(message), { code });

/** A real node:sqlite error of `sql` run on a fresh database prepared by `setup`. */
function sqliteError(setup: string, sql: string): unknown {
  const db = new DatabaseSync(':memory:');
  db.exec(setup);
  try {
    db.exec(sql);
  } catch (error) {
    return error;
  } finally {
    db.close();
  }
  throw new Error(`${sql} did not fail`);
}

test('unique violations from both drivers', (t: TestContext) => {
  t.assert.strictEqual(failureOf(pgError('23505', 'duplicate key value violates unique constraint "books_isbn_key"')), 'unique-violation');
  const sqlite = sqliteError('CREATE TABLE b (isbn TEXT UNIQUE); INSERT INTO b VALUES (1)', 'INSERT INTO b VALUES (1)');
  t.assert.strictEqual(failureOf(sqlite), 'unique-violation');
});

test('a database that cannot be reached or serve is "unavailable"', (t: TestContext) => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P03', '08006', '53300']) {
    t.assert.strictEqual(failureOf(pgError(code)), 'unavailable', code);
  }
  t.assert.strictEqual(failureOf(new Error('Connection terminated unexpectedly')), 'unavailable');
  t.assert.strictEqual(failureOf(new Error('timeout exceeded when trying to connect')), 'unavailable');
  t.assert.strictEqual(failureOf(new AggregateError([pgError('ECONNREFUSED')], 'connect failed')), 'unavailable');
  t.assert.strictEqual(failureOf(pgError('57014', 'canceling statement due to statement timeout')), 'timeout');
});

test('anything else is left to the default 500 (a bug, not the database)', (t: TestContext) => {
  t.assert.strictEqual(failureOf(pgError('42P01', 'relation "bookz" does not exist')), undefined);
  t.assert.strictEqual(failureOf(sqliteError('', 'SELECT * FROM nowhere')), undefined);
  t.assert.strictEqual(failureOf(new TypeError('x is undefined')), undefined);
  t.assert.strictEqual(failureOf('a string'), undefined);
  t.assert.strictEqual(databaseProblem(new TypeError('x')), undefined);
});

test('the problems: 503 with Retry-After, 409; the driver text only as the cause', (t: TestContext) => {
  const down = databaseProblem(pgError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.7:5432'));
  t.assert.ok(down instanceof KError);
  t.assert.strictEqual(down.status, 503);
  t.assert.strictEqual(down.code, 'UNAVAILABLE');
  t.assert.deepStrictEqual(down.headers, { 'Retry-After': '5' });
  t.assert.doesNotMatch(down.message, /10\.0\.0\.7|ECONNREFUSED/);
  const slow = databaseProblem(pgError('57014'));
  t.assert.strictEqual(slow?.status, 503);
  t.assert.strictEqual(databaseProblem(pgError('23505'))?.status, 409);
});
