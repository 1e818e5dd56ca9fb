import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import setup from '../../../examples/books/service.ts';
import { testApp } from '../../helpers/app.ts';
import { booksApp, booksContract, DOCS, SEED, sqliteFile } from './books-backends.ts';

// The example on its default, embedded database: a SQLite file of the test's own.
booksContract('sqlite', false, async (t) => ({ databaseFile: sqliteFile(t) }));

test('sqlite :memory: — a database per process, migrated and seeded by the setup itself (no listen needed)', async (t: TestContext) => {
  const { app } = testApp({ serviceName: 'books', settings: { databaseFile: ':memory:', seedBooks: 30 }, docs: DOCS });
  await setup(app);
  const res = await app.inject({ method: 'GET', url: '/api/books?limit=100' });
  t.assert.strictEqual(res.statusCode, 200);
  t.assert.deepStrictEqual((res.json() as { data: unknown[] }).data, SEED.slice(0, 30));
  await app.close();
});

test('sqlite: the first start creates the file and its directory under the working directory', async (t: TestContext) => {
  const file = join(dirname(sqliteFile(t)), 'nested', 'dir', 'books.sqlite');
  await booksApp(t, { databaseFile: file, seedBooks: 10 });
  t.assert.ok(existsSync(file));
});
