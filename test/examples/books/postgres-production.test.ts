import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { pino } from 'pino';
import { PostgresDatabase } from '../../../examples/books/database/postgres-database.ts';
import { httpRequest, openSocket } from '../../helpers/http.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../../helpers/postgres-server.ts';
import { booksApp } from './books-backends.ts';

const skip = SKIP_WITHOUT_POSTGRES;

/** A connection of the test's own, closed after it. */
async function connection(t: TestContext, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'test' });
  client.on('error', () => {}); // the server stops at the end of the test, maybe before this closes
  await client.connect();
  t.after(() => client.end().catch(() => {}));
  return client;
}

async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

test('the database stopped mid-run: 503 problems from the routes and /health, then recovery', { skip }, async (t) => {
  const server = await postgresServer(t);
  // production: the example's key and reader password must be given (their development values are refused)
  const credentials = { apiKey: 'a-production-key', readerPassword: 'a-production-password' };
  const { port } = await booksApp(t, { databaseUrl: server.url, ...credentials }, { env: 'production' });
  assert.equal((await httpRequest(port, '/api/books?limit=1')).status, 200);

  await server.stop();
  for (const path of ['/api/books', '/api/books/42', '/api/stats']) {
    const res = await httpRequest(port, path);
    assert.equal(res.status, 503, `${path}: ${res.body}`);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers['retry-after'], '5');
    const problem = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(problem['code'], 'UNAVAILABLE');
    assert.equal(problem['detail'], 'the database is unavailable; try again shortly');
    assert.doesNotMatch(res.body, /ECONNREFUSED|127\.0\.0\.1|terminat|pg|postgres/i, 'no driver text');
  }
  const post = await httpRequest(port, '/api/books', {
    method: 'POST',
    headers: { 'x-api-key': credentials.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ isbn: '9790000000024', title: 'Kindred', author: 'Octavia E. Butler', year: 1979, pages: 264 }),
  });
  assert.equal(post.status, 503);
  const health = await httpRequest(port, '/health');
  assert.equal(health.status, 503);
  assert.deepEqual(JSON.parse(health.body), {
    status: 'fail',
    checks: { database: { status: 'fail', durationMs: JSON.parse(health.body).checks.database.durationMs } },
  });

  await server.start();
  const back = await until(async () => {
    const res = await httpRequest(port, '/api/books?limit=1');
    return res.status === 200 ? res : undefined;
  }, 'the routes to recover');
  assert.equal((JSON.parse(back.body) as { total: number }).total, 5_000);
  assert.equal((await httpRequest(port, '/health')).status, 200);
});

test('a client that disconnects cancels its running query on the server (pg_stat_activity)', { skip }, async (t) => {
  const server = await postgresServer(t);
  // no statement timeout: only the client's leaving may end the statement
  const { port, logs } = await booksApp(t, { databaseUrl: server.url, statementTimeoutMs: 0 });
  const locker = await connection(t, server.url);
  const observer = await connection(t, server.url);
  // the list's statement waits for this lock: a slow query, for as long as the test wants
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE books IN ACCESS EXCLUSIVE MODE');

  const running = async () => {
    const { rows } = await observer.query<{ pid: number; state: string; wait_event_type: string | null }>(
      "SELECT pid, state, wait_event_type FROM pg_stat_activity WHERE application_name = 'books' AND state = 'active' AND query LIKE 'SELECT id, isbn%'",
    );
    return rows;
  };
  const socket = await openSocket(port);
  socket.on('error', () => {});
  socket.write(`GET /api/books?q=winter HTTP/1.1\r\nHost: x\r\n\r\n`);
  const [query] = await until(async () => ((await running()).length > 0 ? running() : undefined), 'the query to run on the server');
  assert.equal(query?.wait_event_type, 'Lock', 'it waits for the lock');

  socket.destroy();
  await until(async () => ((await running()).length === 0 ? true : undefined), 'the query to stop running on the server', 5_000);
  // the lock is still held: the statement did not finish, it was cancelled
  const { rows } = await observer.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'test' AND l.mode = 'AccessExclusiveLock' AND l.granted",
  );
  assert.equal(rows[0]?.n, 1);
  await locker.query('ROLLBACK');
  assert.ok(!logs.lines.some((l) => l['level'] === 50 && String(l['msg']).includes('request')), 'no error logged for the gone client');
});

test('the statement timeout answers a 503, not a 500', { skip }, async (t) => {
  const server = await postgresServer(t);
  const { port } = await booksApp(t, { databaseUrl: server.url, statementTimeoutMs: 300 });
  const locker = await connection(t, server.url);
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE books IN ACCESS EXCLUSIVE MODE');
  const res = await httpRequest(port, '/api/books/1');
  assert.equal(res.status, 503, res.body);
  assert.equal(JSON.parse(res.body).detail, 'the database did not answer in time');
  await locker.query('ROLLBACK');
});

test('the shutdown hook ends the pool: no connection of the service is left on the server', { skip }, async (t) => {
  const server = await postgresServer(t);
  const { app, port, logs } = await booksApp(t, { databaseUrl: server.url, poolSize: 3 });
  const observer = await connection(t, server.url);
  await Promise.all(Array.from({ length: 6 }, () => httpRequest(port, '/api/books?q=lem')));
  const count = async () =>
    (await observer.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'books'")).rows[0]?.n;
  const open = await count();
  assert.ok(open !== undefined && open >= 1 && open <= 3, `the pool holds 1 to poolSize connections (${open})`);
  await app.close();
  assert.ok(logs.lines.some((l) => l['msg'] === 'database closed'));
  await until(async () => ((await count()) === 0 ? true : undefined), 'the connections to close', 5_000);
  assert.equal(app.cleanShutdown, true);
});

test('a connection the server ends while it is checked out is an error of its work, never a crash', { skip }, async (t) => {
  const server = await postgresServer(t);
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const db = await PostgresDatabase.connect({ url: server.url, poolSize: 2, statementTimeoutMs: 0, logger });
  t.after(() => db.close());
  const observer = await connection(t, server.url);
  // the transaction's connection, checked out and between two statements, is ended by the server (as a restart does)
  const work = db.exclusive(42, async (tx) => {
    await observer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'books'");
    await sleep(200);
    return tx.query('SELECT 1');
  });
  await assert.rejects(work);
  assert.ok(
    lines.some((l) => l['msg'] === 'database connection lost'),
    'the loss is logged',
  );
  // the pool serves again, on a new connection
  assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
});
