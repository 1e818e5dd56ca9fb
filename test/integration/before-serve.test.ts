import { type TestContext, test } from 'node:test';
import { byMsg, startCluster } from '../helpers/cluster.ts';

/** When a line was logged (its own time: the service thread's lines reach stdout in batches). */
const loggedAt = (line: Record<string, unknown> | undefined) => Date.parse(String(line?.['time']));

test('beforeServe runs once, in the primary, and no worker listens before it is done', async (t: TestContext) => {
  const cluster = startCluster(t, { env: { FIXTURE_BEFORE_SERVE_MS: '1500' } });
  await cluster.ready(2, 15_000);
  const hooks = cluster.lines.filter(byMsg('fixture before serve'));
  t.assert.strictEqual(hooks.length, 1, 'one run for the whole cluster');
  t.assert.strictEqual(hooks[0]?.pid, cluster.pid, 'in the primary (its service thread)');
  const done = await cluster.waitFor(byMsg('beforeServe hooks done'), 'the hooks');
  // the workers were forked at once and set up meanwhile; they listen once the primary says so
  for (const line of cluster.lines.filter(byMsg('worker listening'))) {
    t.assert.ok(loggedAt(line) >= loggedAt(done), `a worker listened before the hooks were done: ${JSON.stringify(line)}`);
  }
  t.assert.ok(!cluster.lines.some((l) => l.msg === 'fixture before serve' && l.pid !== cluster.pid), 'no worker runs it');
});

test('a SIGTERM while beforeServe runs aborts its signal; the cluster exits 0 with no worker listening', async (t: TestContext) => {
  const cluster = startCluster(t, { env: { FIXTURE_BEFORE_SERVE_MS: '60000' } });
  await cluster.waitFor(byMsg('fixture before serve'), 'the hook', 15_000);
  cluster.signal('SIGTERM');
  const exit = await cluster.exit(15_000);
  t.assert.strictEqual(exit.code, 0, cluster.tail());
  t.assert.ok(cluster.lines.some(byMsg('fixture before serve aborted')));
  t.assert.ok(!cluster.lines.some(byMsg('worker listening')), 'no worker listened');
});

test('a beforeServe hook that keeps failing stops the cluster (crash loop, exit 1); no worker serves', async (t: TestContext) => {
  const cluster = startCluster(t, { env: { FIXTURE_BEFORE_SERVE_FAIL: '1' } });
  const exit = await cluster.exit(30_000);
  t.assert.strictEqual(exit.code, 1, cluster.tail());
  t.assert.ok(cluster.lines.filter(byMsg('fixture before serve')).length >= 2, 'retried with backoff first');
  t.assert.ok(
    cluster.lines.some((l) => String(l.msg).includes('crash loop')),
    cluster.tail(),
  );
  t.assert.ok(!cluster.lines.some(byMsg('worker listening')));
});

test('workers awaiting beforeServe are not timed out: the start-up timeout counts from the hooks done', async (t: TestContext) => {
  // the timeout must cover a worker's boot on a loaded machine (up to the await-serve: 5 s was seen short
  // with the suite running two files at once on 2 cores), and the hooks outlast it twice
  const cluster = startCluster(t, {
    config: { cluster: { startupTimeoutMs: 8_000, backoffInitialMs: 50, backoffMaxMs: 500 } },
    env: { FIXTURE_BEFORE_SERVE_MS: '16000' },
  });
  await cluster.ready(2, 50_000);
  t.assert.ok(!cluster.lines.some(byMsg('worker did not start listening in time: killing it')), cluster.tail());
  t.assert.strictEqual(cluster.lines.filter(byMsg('worker listening')).length, 2, 'the first two workers, none replaced');
});
