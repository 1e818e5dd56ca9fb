import { type TestContext, test } from 'node:test';
import { byMsg, startCluster } from '../helpers/cluster.ts';

test('beforeServe runs once, in the primary, and no worker is forked before it is done', async (t: TestContext) => {
  const cluster = startCluster(t, { env: { FIXTURE_BEFORE_SERVE_MS: '1500' } });
  await cluster.ready(2, 15_000);
  const hooks = cluster.lines.filter(byMsg('fixture before serve'));
  t.assert.strictEqual(hooks.length, 1, 'one run for the whole cluster');
  t.assert.strictEqual(hooks[0]?.pid, cluster.pid, 'in the primary (its service thread)');
  const done = cluster.lines.find(byMsg('beforeServe hooks done'));
  t.assert.ok(done !== undefined, cluster.tail());
  await cluster.waitFor((l) => l.pid !== cluster.pid, 'a line of a worker');
  const workerLines = cluster.lines.filter((l) => l.pid !== cluster.pid);
  for (const line of workerLines) t.assert.ok(line.at >= done.at, `a worker logged before the hooks were done: ${JSON.stringify(line)}`);
  t.assert.ok(!cluster.lines.some((l) => l.msg === 'fixture before serve' && l.pid !== cluster.pid), 'no worker runs it');
});

test('a SIGTERM while beforeServe runs aborts its signal; the cluster exits 0 without forking', async (t: TestContext) => {
  const cluster = startCluster(t, { env: { FIXTURE_BEFORE_SERVE_MS: '60000' } });
  await cluster.waitFor(byMsg('fixture before serve'), 'the hook', 15_000);
  cluster.signal('SIGTERM');
  const exit = await cluster.exit(15_000);
  t.assert.strictEqual(exit.code, 0, cluster.tail());
  t.assert.ok(cluster.lines.some(byMsg('fixture before serve aborted')));
  t.assert.ok(!cluster.lines.some(byMsg('worker listening')), 'no worker was forked');
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
