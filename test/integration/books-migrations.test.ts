import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ClusterProcess, configYaml, type LogLine } from '../../tools/cluster-process.ts';
import { byMsg, CLI, get, tempFiles } from '../helpers/cluster.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';

/** The example service itself, as `npm start` runs it. */
const SERVICE = fileURLToPath(new URL('../../examples/books/service.ts', import.meta.url));

/** `flotilla start` of the example with `settings`, 2 workers, in a temporary directory; killed after the test. */
function books(t: TestContext, settings: Record<string, unknown>): ClusterProcess {
  // the example's create route declares its API key: the scheme is declared as config/app.yaml does
  const docs = { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } }, security: [] };
  // a production start (flotilla start's default): the example's credentials must be given
  const credentials = { apiKey: 'migrations-test-key', readerPassword: 'migrations-test-password' };
  const yaml = configYaml(
    { serviceName: 'books', service: SERVICE, cluster: { startupTimeoutMs: 20_000 }, docs },
    { settings: { ...credentials, ...settings } },
  );
  const dir = tempFiles(t, { 'app.yaml': yaml });
  const cluster = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml'), execArgv: ['--conditions=source'] });
  t.after(() => cluster.kill());
  return cluster;
}

const migrated = byMsg('database migrated');
const upToDate = byMsg('database schema up to date');
/** When a line was logged (its own time: the service thread's lines reach stdout in batches, later than the workers'). */
const loggedAt = (line: LogLine | undefined) => Date.parse(String(line?.['time']));

test('SQLite, 2 workers: the migrations and the seed run once, in the primary, before any worker listens', async (t: TestContext) => {
  const file = join(tempFiles(t, {}), 'books.sqlite');
  const cluster = books(t, { databaseFile: file });
  await cluster.ready(2, 30_000);
  await cluster.waitFor(byMsg('beforeServe hooks done'), 'the primary part of the service');
  const runs = cluster.lines.filter(migrated);
  t.assert.strictEqual(runs.length, 1, cluster.tail());
  t.assert.strictEqual(runs[0]?.pid, cluster.pid, 'in the primary');
  t.assert.deepStrictEqual(runs[0]?.['applied'], ['0001-books', 'seed-books']);
  // flotilla's migrate() applied the file, the example's own step seeded
  t.assert.deepStrictEqual(
    cluster.lines.filter(byMsg('migration 0001-books.sql applied')).map((l) => l.pid),
    [cluster.pid],
  );
  const firstListening = cluster.lines.find(byMsg('worker listening'));
  t.assert.ok(
    loggedAt(firstListening) >= loggedAt(runs[0]),
    `no worker listened before the migrations were done: ${JSON.stringify([firstListening, runs[0]])}`,
  );
  const page = JSON.parse((await get(cluster.appPort, '/api/books?page=250')).body) as { total: number; data: unknown[] };
  t.assert.deepStrictEqual([page.total, page.data.length], [5_000, 20]);

  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(15_000)).code, 0, cluster.tail());
  t.assert.strictEqual(cluster.lines.filter(byMsg('database closed')).length, 3, 'each worker and the primary close theirs');

  const again = books(t, { databaseFile: file });
  await again.ready(2, 30_000);
  await again.waitFor(byMsg('beforeServe hooks done'), 'the primary part of the service');
  t.assert.strictEqual(again.lines.filter(migrated).length, 0, 'the second start migrates nothing');
  t.assert.strictEqual(again.lines.filter(upToDate).length, 1);
  const db = new DatabaseSync(file, { readOnly: true });
  t.after(() => db.close());
  t.assert.deepStrictEqual({ ...db.prepare('SELECT count(*) AS n FROM books').get() }, { n: 5_000 }, 'seeded once');
});

test('PostgreSQL, two replicas of 2 workers started together: each step runs once, the other replica waits and finds it done', {
  skip: SKIP_WITHOUT_POSTGRES,
}, async (t: TestContext) => {
  const server = await postgresServer(t);
  const replicas = [books(t, { databaseUrl: server.url }), books(t, { databaseUrl: server.url })];
  await Promise.all(replicas.map((r) => r.ready(2, 30_000)));
  await Promise.all(replicas.map((r) => r.waitFor(byMsg('beforeServe hooks done'), 'the primary part of the service')));
  const lines = replicas.flatMap((r) => r.lines);
  // the migrations and the seed take a lock each: the replica that got the first may lose the second,
  // and then each replica ran one step; never a step twice
  const applied = lines.filter(migrated).flatMap((l) => l['applied'] as string[]);
  t.assert.deepStrictEqual(applied.sort(), ['0001-books', 'seed-books'], replicas.map((r) => r.tail()).join('\n'));
  for (const r of replicas) t.assert.strictEqual(r.lines.filter((l) => migrated(l) || upToDate(l)).length, 1, 'one line a replica');
  t.assert.strictEqual(lines.filter(byMsg('migration 0001-books.sql applied')).length, 1);
  for (const r of replicas) {
    t.assert.ok(
      !r.lines.some((l) => (l.msg === 'database migrated' || l.msg === 'database schema up to date') && l.pid !== r.pid),
      'never in a worker',
    );
    const reply = await get(r.appPort, '/api/books?limit=1&q=borges');
    const page = JSON.parse(reply.body) as { total: number };
    t.assert.ok(page.total > 0, reply.body);
  }

  const client = new pg.Client({ connectionString: server.url });
  client.on('error', () => {});
  await client.connect();
  t.after(() => client.end().catch(() => {}));
  const { rows } = await client.query<{ n: number; v: number; checked: number }>(
    'SELECT (SELECT count(*)::int FROM books) AS n, (SELECT count(*)::int FROM schema_migrations) AS v, (SELECT count(checksum)::int FROM schema_migrations) AS checked',
  );
  // the file's row has its checksum; the seed's, recorded by the example's code, has none
  t.assert.deepStrictEqual(rows[0], { n: 5_000, v: 2, checked: 1 });
  const { rows: pools } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'books'",
  );
  // each replica: 2 workers × poolSize (5) + the primary's 1; only what was used is open
  t.assert.ok((pools[0]?.n ?? 0) <= 2 * (2 * 5 + 1), `${pools[0]?.n} connections`);
});
