import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { Book } from '../../../examples/books/book.ts';
import { sampleBooks } from '../../../examples/books/book-repository.ts';
import setup from '../../../examples/books/service.ts';
import type { App } from '../../../src/app/app.ts';
import { loadConfigFile } from '../../../src/config/load-file.ts';
import { serve, testApp } from '../../helpers/app.ts';
import type { LogSink } from '../../helpers/sink.ts';

/** The example's seed: what every backend serves after its first start. */
export const SEED = sampleBooks(5_000);
export const API_KEY = 'dev-key';

/** The example's `docs` section (its security schemes: the create route declares its API key). */
export const DOCS = loadConfigFile('config/app.yaml', { PORT: '0', METRICS_PORT: '0', NODE_ENV: 'development' }).config.docs;

/** The example service on an App listening on 127.0.0.1 (its `beforeServe` migrations ran), closed after the test. */
export async function booksApp(
  t: TestContext,
  settings: Record<string, unknown>,
  config: Record<string, unknown> = {},
): Promise<{ app: App; logs: LogSink; port: number }> {
  const { app, logs } = testApp({ serviceName: 'books', settings, docs: DOCS, ...config });
  await setup(app);
  const port = await serve(t, app);
  return { app, logs, port };
}

/** A SQLite file in a fresh temporary directory removed after the test. */
export function sqliteFile(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-books-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'books.sqlite');
}

interface PageBody {
  data: Book[];
  total: number;
  page: number;
  limit: number;
  total_pages: number;
}

async function list(app: App, query: string): Promise<PageBody> {
  const res = await app.inject({ method: 'GET', url: `/api/books${query}` });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as PageBody;
}

/** What the in-memory twin of the SQL filter keeps (see `InMemoryBookRepository`). */
const matching = (q: string) => SEED.filter((b) => b.title.toLowerCase().includes(q) || b.author.toLowerCase().includes(q));

/**
 * The routes' behaviour every backend must show, on a freshly migrated and seeded database: the
 * expected values are computed from the seed, so both backends are held to the same results.
 */
export function booksContract(name: string, skip: string | false, settingsFor: (t: TestContext) => Promise<Record<string, unknown>>): void {
  test(`${name}: pagination edges: first, last, beyond the last, limit capping`, { skip }, async (t) => {
    const { app } = await booksApp(t, await settingsFor(t));

    const first = await list(app, '');
    assert.deepEqual(first, { data: SEED.slice(0, 20), total: 5_000, page: 1, limit: 20, total_pages: 250 });

    const last = await list(app, '?page=715&limit=7'); // 5 000 = 714 × 7 + 2
    assert.deepEqual(last, { data: SEED.slice(4_998), total: 5_000, page: 715, limit: 7, total_pages: 715 });

    const beyond = await list(app, '?page=716&limit=7');
    assert.deepEqual(beyond, { data: [], total: 5_000, page: 716, limit: 7, total_pages: 715 });

    const far = await list(app, '?page=90071992547&limit=100');
    assert.deepEqual({ ...far, data: far.data.length }, { data: 0, total: 5_000, page: 90_071_992_547, limit: 100, total_pages: 50 });

    const capped = await list(app, '?limit=500&page=3');
    assert.equal(capped.limit, 100);
    assert.deepEqual(
      capped.data.map((b) => b.id),
      SEED.slice(200, 300).map((b) => b.id),
    );
  });

  test(`${name}: search by q (title or author) and by author, with LIKE's wildcards taken literally`, { skip }, async (t) => {
    const { app } = await booksApp(t, await settingsFor(t));

    const winter = matching('winter');
    const page2 = await list(app, '?q=WINTER&page=2&limit=50');
    assert.equal(page2.total, winter.length);
    assert.deepEqual(page2.data, winter.slice(50, 100));

    const lem = await list(app, '?q=lem&limit=100');
    assert.equal(lem.total, matching('lem').length);
    assert.ok(lem.data.every((b) => b.author === 'Stanisław Lem' || b.title.toLowerCase().includes('lem')));

    const byAuthor = await list(app, '?author=morrison&q=glass');
    const expected = SEED.filter((b) => b.author.toLowerCase().includes('morrison') && b.title.toLowerCase().includes('glass'));
    assert.equal(byAuthor.total, expected.length);
    assert.deepEqual(byAuthor.data, expected.slice(0, 20));

    for (const wildcard of ['%', '_', '\\']) {
      const none = await list(app, `?q=${encodeURIComponent(wildcard)}`);
      assert.deepEqual({ total: none.total, data: none.data }, { total: 0, data: [] }, `q=${wildcard} matches nothing`);
    }
    const nothing = await list(app, '?q=zzz&page=3');
    assert.deepEqual(
      { total: nothing.total, total_pages: nothing.total_pages, data: nothing.data },
      { total: 0, total_pages: 0, data: [] },
    );
  });

  test(`${name}: create, read back, and a duplicate ISBN is a 409 problem`, { skip }, async (t) => {
    const { app } = await booksApp(t, await settingsFor(t));
    const book = { isbn: '9790000000017', title: 'The Dispossessed', author: 'Ursula K. Le Guin', year: 1974, pages: 387 };
    const post = () =>
      app.inject({
        method: 'POST',
        url: '/api/books',
        headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
        payload: book,
      });

    const created = await post();
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json(), { id: 5_001, ...book });
    assert.equal(created.headers['location'], '/api/books/5001');
    const read = await app.inject({ method: 'GET', url: '/api/books/5001' });
    assert.deepEqual(read.json(), { id: 5_001, ...book });
    assert.equal((await list(app, '?q=dispossessed')).total, 1);

    const again = await post();
    assert.equal(again.statusCode, 409);
    assert.equal(again.headers['content-type'], 'application/problem+json');
    const problem = again.json() as Record<string, unknown>;
    assert.equal(problem['code'], 'CONFLICT');
    assert.equal(problem['detail'], 'a book with ISBN 9790000000017 already exists');
    assert.deepEqual(problem['details'], { isbn: book.isbn });

    const missing = await app.inject({ method: 'GET', url: '/api/books/999999' });
    assert.equal(missing.statusCode, 404);
    const stats = await app.inject({ method: 'GET', url: '/api/stats' });
    assert.deepEqual(stats.json(), { books: 5_001 });
  });

  test(`${name}: /health checks the database`, { skip }, async (t) => {
    const { app } = await booksApp(t, await settingsFor(t));
    const res = await app.inject({ method: 'GET', url: '/health' });
    assert.equal(res.statusCode, 200);
    assert.equal((res.json() as { checks: Record<string, { status: string }> }).checks['database']?.status, 'pass');
  });
}
