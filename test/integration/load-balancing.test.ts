import { type TestContext, test } from 'node:test';
import { startCluster, who } from '../helpers/cluster.ts';

test('requests on separate connections are served by every worker, never by the primary', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, workers } = await cluster.ready();
  const workerPids = new Set(workers.values());
  t.assert.strictEqual(workerPids.size, 2, 'two distinct worker processes are up');
  t.assert.ok(!workerPids.has(cluster.pid), 'no worker is the primary');

  const served = new Map<number, number>();
  for (let i = 0; i < 40; i++) {
    const pid = await who(appPort);
    served.set(pid, (served.get(pid) ?? 0) + 1);
  }

  t.assert.deepStrictEqual(new Set(served.keys()), workerPids, 'both workers answered, and only them');
  // node:cluster hands connections round-robin: neither worker is starved
  for (const [pid, count] of served) t.assert.ok(count >= 10, `worker ${pid} served only ${count} of 40 requests`);
});

test('with cluster.balancing: kernel the workers accept connections themselves, never the primary', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { balancing: 'kernel' } } });
  const { appPort, workers } = await cluster.ready();
  const workerPids = new Set(workers.values());
  // the kernel picks the accepting worker: the spread is uneven by design, but only workers answer
  for (let i = 0; i < 20; i++) t.assert.ok(workerPids.has(await who(appPort)));
  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0);
});
