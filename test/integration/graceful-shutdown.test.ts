import { type TestContext, test } from 'node:test';
import { byMsg, get, startCluster } from '../helpers/cluster.ts';

test('SIGTERM lets 20 in-flight requests finish, runs the hooks in order in every process, and exits 0', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, workers } = await cluster.ready();
  const workerPids = [...workers.values()];

  const requests = Array.from({ length: 20 }, () => get(appPort, '/slow?ms=1500', 12_000));
  await cluster.waitForCount(byMsg('fixture slow started'), 20, 'the 20 requests inside their handler');
  const signalledAt = Date.now();
  cluster.signal('SIGTERM');

  const replies = await Promise.all(requests);
  t.assert.deepStrictEqual(
    replies.map((r) => r.status),
    Array(20).fill(200),
  );
  for (const reply of replies) t.assert.ok(workerPids.includes((JSON.parse(reply.body) as { pid: number }).pid));
  const exit = await cluster.exit(10_500 - (Date.now() - signalledAt));
  t.assert.deepStrictEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, cluster.stderr);
  t.assert.ok(exit.at - signalledAt <= 10_500, `exited ${exit.at - signalledAt} ms after the signal`);

  const inFlight = cluster.lines.filter(byMsg('shutdown: finish-in-flight')).filter((l) => workerPids.includes(l.pid as number));
  t.assert.strictEqual(
    inFlight.reduce((sum, l) => sum + (l['inFlight'] as number), 0),
    20,
    'the workers were still serving all 20 requests when they began to shut down',
  );

  for (const [role, pid] of [['primary', cluster.pid] as const, ...workerPids.map((pid) => ['worker', pid] as const)]) {
    const hooks = cluster.lines.filter((l) => l.msg === 'fixture hook' && l.pid === pid);
    t.assert.deepStrictEqual(
      hooks.map((l) => [l['hook'], l['tag'], l['aborted']]),
      [
        [1, `${role}:${pid}`, undefined],
        [2, `${role}:${pid}`, false],
      ],
      `hooks of the ${role} ${pid}: hook 1 then hook 2, once each, in time`,
    );
  }
  for (const pid of workerPids) {
    t.assert.ok(cluster.lines.some((l) => l.msg === 'worker exited' && l['workerPid'] === pid && l['code'] === 0));
  }
});
