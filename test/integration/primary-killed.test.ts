import { type TestContext, test } from 'node:test';
import { allGone, byMsg, get, startCluster } from '../helpers/cluster.ts';

test('when the primary is SIGKILLed, the workers finish their requests, run their hooks once, and exit', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, workers } = await cluster.ready();
  const workerPids = [...workers.values()];

  const requests = Array.from({ length: 4 }, () => get(appPort, '/slow?ms=1000', 5_000));
  await cluster.waitForCount(byMsg('fixture slow started'), 4, 'the requests inside their handler');
  cluster.signal('SIGKILL');

  const replies = await Promise.all(requests);
  t.assert.deepStrictEqual(
    replies.map((r) => r.status),
    [200, 200, 200, 200],
    'requests in flight are not cut',
  );
  for (const pid of workerPids) {
    const stopped = await cluster.waitFor((l) => l.msg === 'shutdown: done' && l.pid === pid, `worker ${pid} shut down`, 5_000);
    t.assert.strictEqual(stopped['ok'], true);
    t.assert.deepStrictEqual(
      cluster.lines.filter((l) => l.msg === 'worker shutting down' && l.pid === pid).map((l) => l['reason']),
      ['primary disconnected'],
    );
    t.assert.deepStrictEqual(
      cluster.lines.filter((l) => l.msg === 'fixture hook' && l.pid === pid).map((l) => l['hook']),
      [1, 2],
    );
  }
  await allGone(workerPids, 2_000);
});
