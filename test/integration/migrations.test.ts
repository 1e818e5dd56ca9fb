import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ClusterProcess, configYaml, type LogLine } from '../../tools/cluster-process.ts';
import { byMsg, CLI, get, tempFiles } from '../helpers/cluster.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';

/** `migrate()` in the `beforeServe` hook of a service, on the SQL files of test/fixtures/migrations/sql/. */
const SERVICE = fileURLToPath(new URL('../fixtures/migrations/service.ts', import.meta.url));
const FILES = ['0001-notes', '0002-authors'];

/** `flotilla start` of the fixture with `settings`, 2 workers; killed after the test. */
function cluster(t: TestContext, settings: Record<string, unknown>): ClusterProcess {
  const yaml = configYaml({ serviceName: 'migrations', service: SERVICE, workers: 2, cluster: { startupTimeoutMs: 20_000 } }, { settings });
  const dir = tempFiles(t, { 'app.yaml': yaml });
  const started = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml'), execArgv: ['--conditions=source'] });
  t.after(() => started.kill());
  return started;
}

const applied = (line: LogLine) => typeof line.msg === 'string' && / applied$/.test(line.msg) && typeof line['migration'] === 'string';
const at = (line: LogLine | undefined) => Date.parse(String(line?.['time']));

async function versionsServed(port: number): Promise<string[]> {
  const reply = await get(port, '/migrations');
  return JSON.parse(reply.body) as string[];
}

test('SQLite, a 2-worker cluster: each file applied once, by the primary, before any worker listens; the next start applies none', async (t: TestContext) => {
  const file = join(tempFiles(t, {}), 'notes.sqlite');
  const first = cluster(t, { databaseFile: file });
  await first.ready(2, 30_000);
  await first.waitFor(byMsg('beforeServe hooks done'), 'the primary part of the service');
  const lines = first.lines.filter(applied);
  t.assert.deepStrictEqual(
    lines.map((l) => l['migration']),
    FILES,
    first.tail(),
  );
  t.assert.ok(
    lines.every((l) => l.pid === first.pid),
    'in the primary',
  );
  const listening = first.lines.find(byMsg('worker listening'));
  t.assert.ok(at(listening) >= at(lines.at(-1)), 'no worker listened before the migrations were done');
  t.assert.deepStrictEqual(await versionsServed(first.appPort), FILES);
  first.signal('SIGTERM');
  t.assert.strictEqual((await first.exit(15_000)).code, 0, first.tail());

  const again = cluster(t, { databaseFile: file });
  await again.ready(2, 30_000);
  await again.waitFor(byMsg('beforeServe hooks done'), 'the primary part of the service');
  t.assert.deepStrictEqual(again.lines.filter(applied), [], 'nothing applied again');
  const db = new DatabaseSync(file, { readOnly: true });
  t.after(() => db.close());
  t.assert.deepStrictEqual(
    db
      .prepare('SELECT version, length(checksum) AS sha256 FROM schema_migrations ORDER BY version')
      .all()
      .map((r) => ({ ...r })),
    FILES.map((version) => ({ version, sha256: 64 })),
  );
});

test('PostgreSQL, two 2-worker clusters started together on one database: each file applied once in all', {
  skip: SKIP_WITHOUT_POSTGRES,
}, async (t: TestContext) => {
  const server = await postgresServer(t);
  const replicas = [cluster(t, { databaseUrl: server.url }), cluster(t, { databaseUrl: server.url })];
  await Promise.all(replicas.map((r) => r.ready(2, 30_000)));
  await Promise.all(replicas.map((r) => r.waitFor(byMsg('beforeServe hooks done'), 'the primary part of the service')));
  const lines = replicas.flatMap((r) => r.lines.filter(applied));
  t.assert.deepStrictEqual(lines.map((l) => l['migration']).sort(), FILES, replicas.map((r) => r.tail()).join('\n'));
  t.assert.ok(
    replicas.every((r) => r.lines.filter(applied).every((l) => l.pid === r.pid)),
    'in the primaries',
  );
  for (const r of replicas) t.assert.deepStrictEqual(await versionsServed(r.appPort), FILES);

  const client = new pg.Client({ connectionString: server.url });
  client.on('error', () => {});
  await client.connect();
  t.after(() => client.end().catch(() => {}));
  const { rows } = await client.query('SELECT version, length(checksum) AS sha256 FROM schema_migrations ORDER BY version');
  t.assert.deepStrictEqual(
    rows,
    FILES.map((version) => ({ version, sha256: 64 })),
  );
  const { rows: locks } = await client.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
  t.assert.deepStrictEqual(locks, [{ n: 0 }], 'the lock was given back');
});
