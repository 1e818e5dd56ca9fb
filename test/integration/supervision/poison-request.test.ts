import { type TestContext, test } from 'node:test';
import { byMsg, get, sample, startCluster } from '../../helpers/cluster.ts';

test('a poison request that kills a stable worker every time never makes the primary give up', async (t: TestContext) => {
  // crashLoopFailures is 4 in the tests' base config: ten early deaths would end the cluster, ten stable ones must not
  const cluster = startCluster(t, { config: { cluster: { stableAfterMs: 500 } } });
  const { appPort, metricsPort } = await cluster.ready();

  for (let i = 1; i <= 10; i++) {
    // every worker listening now has been up longer than stableAfterMs
    await new Promise((r) => setTimeout(r, 600));
    const reply = await get(appPort, '/throw-async');
    t.assert.strictEqual(reply.status, 200, 'the poison request itself is answered');
    const victim = (JSON.parse(reply.body) as { throwing: number }).throwing;
    await cluster.waitFor(byMsg('worker exited unexpectedly: replacing it', { workerPid: victim }), `death ${i}`);
    await cluster.waitForCount(byMsg('worker listening'), 2 + i, `replacement ${i}`);
  }

  const after = await get(appPort, '/pid');
  t.assert.strictEqual(after.status, 200, 'the cluster still serves');
  const metrics = (await get(metricsPort, '/metrics')).body;
  t.assert.strictEqual(sample(metrics, 'flotilla_worker_restarts_total{reason="uncaught-exception"}'), 10);
  t.assert.strictEqual(sample(metrics, 'flotilla_workers_up'), 2);
  t.assert.ok(!cluster.lines.some((l) => l.msg?.includes('giving up')), 'no crash loop was declared');
});
