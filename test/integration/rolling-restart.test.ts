import { type TestContext, test } from 'node:test';
import { allGone, byMsg, get, sample, startCluster, who } from '../helpers/cluster.ts';

test('SIGHUP replaces every worker one by one without dropping a request', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, metricsPort, workers } = await cluster.ready();
  const before = [...workers.values()];

  // Four clients in a loop on new connections; every single request must succeed.
  const pids = new Set<number>();
  let answered = 0;
  const failures: string[] = [];
  let loading = true;
  const client = async () => {
    while (loading) {
      try {
        const reply = await get(appPort, '/who', 5_000);
        if (reply.status === 200) {
          answered++;
          pids.add((JSON.parse(reply.body) as { pid: number }).pid);
        } else failures.push(`status ${reply.status}`);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  };
  const load = Promise.all([client(), client(), client(), client()]);
  await cluster.waitForCount(byMsg('request completed'), 10, 'load before the restart');

  cluster.signal('SIGHUP');
  const done = await cluster.waitFor(byMsg('rolling restart: done'), 'the rolling restart', 20_000);
  const retired = cluster.lines.filter((l) => l.msg === 'worker retired').map((l) => l['workerPid']);
  const fresh = cluster.lines
    .filter((l) => l.msg === 'worker listening' && !before.includes(l['workerPid'] as number))
    .map((l) => l['workerPid'] as number);
  await cluster.waitForCount((l) => l.msg === 'request completed' && fresh.includes(l.pid as number), 4, 'the new workers serving');
  loading = false;
  await load;

  t.diagnostic(`${answered} answers during the restart, ${failures.length} failures; ${done['elapsedMs']} ms`);
  t.assert.deepStrictEqual(failures, [], 'no request failed');
  t.assert.deepStrictEqual(retired.sort(), [...before].sort(), 'both old workers retired through their shutdown');
  t.assert.strictEqual(fresh.length, 2);
  await allGone(before);
  t.assert.strictEqual(
    cluster.lines.filter((l) => l.msg === 'worker exited unexpectedly: replacing it').length,
    0,
    'no retirement counts as a crash',
  );
  t.assert.strictEqual(
    cluster.lines.filter((l) => l.msg === 'fixture hook' && l['hook'] === 2 && before.includes(l.pid as number)).length,
    2,
    'old workers ran their hooks',
  );

  // the kernel picks which worker accepts a new connection: ask until both answered (a busy machine may favour one)
  const after = new Set<number>();
  for (let i = 0; i < 200 && after.size < fresh.length; i++) {
    const pid = await who(appPort);
    t.assert.ok(fresh.includes(pid), `only the new workers answer (${pid})`);
    after.add(pid);
  }
  t.assert.deepStrictEqual(after, new Set(fresh));
  const metrics = (await get(metricsPort, '/metrics')).body;
  t.assert.strictEqual(sample(metrics, 'flotilla_workers_up'), 2);
  t.assert.strictEqual(sample(metrics, 'flotilla_worker_restarts_total{reason="killed-SIGKILL"}'), undefined);

  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0);
});
