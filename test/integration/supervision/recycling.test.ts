import { type TestContext, test } from 'node:test';
import { byMsg, get, sample, startCluster } from '../../helpers/cluster.ts';

/** Requests on fresh connections from `clients` loops until `stop()`: every answer's status, and every error. */
function load(port: number, clients = 2) {
  const statuses: number[] = [];
  const errors: string[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      try {
        statuses.push((await get(port, '/pid', 5_000)).status);
      } catch (error) {
        errors.push(String(error));
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, loop));
  return {
    statuses,
    errors,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

test('a worker that outgrows cluster.maxMemoryMB is recycled gracefully: no request to the others fails', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { heartbeatIntervalMs: 200, maxMemoryMB: 200 } } });
  const { appPort, metricsPort } = await cluster.ready();
  const traffic = load(appPort);
  const leak = await get(appPort, '/leak?mb=160');
  const leaker = (JSON.parse(leak.body) as { pid: number }).pid;

  const recycle = await cluster.waitFor(byMsg('recycling a worker: its replacement listens first', { workerPid: leaker }), 'the recycling');
  t.assert.strictEqual(recycle['reason'], 'memory');
  t.assert.ok((recycle['rss'] as number) > 200 * 1_048_576);
  const fresh = await cluster.waitFor(
    (l) => l.msg === 'worker listening' && l['slot'] === recycle['slot'] && l['workerPid'] !== leaker,
    'the replacement',
  );
  const retired = await cluster.waitFor(byMsg('worker retired', { workerPid: leaker }), 'the old worker retired');
  t.assert.ok(
    Date.parse(String(fresh['time'])) <= Date.parse(String(retired['time'])),
    'the replacement listened before the old worker left',
  );
  t.assert.ok(
    cluster.lines.some((l) => l.pid === leaker && l.msg === 'shutdown: done'),
    'the old worker ran its graceful shutdown',
  );
  await traffic.stop();

  t.diagnostic(`${traffic.statuses.length} requests during the recycling`);
  t.assert.deepStrictEqual(traffic.errors, []);
  t.assert.ok(traffic.statuses.every((s) => s === 200));
  const metrics = (await get(metricsPort, '/metrics')).body;
  t.assert.strictEqual(sample(metrics, 'flotilla_worker_restarts_total{reason="memory"}'), 1);
});

test('cluster.maxRequests with jitter recycles each worker after its own number of requests', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { heartbeatIntervalMs: 100, maxRequests: 40, maxRequestsJitter: 20 } } });
  const { appPort, metricsPort, workers } = await cluster.ready();
  const traffic = load(appPort);
  const recycled = await cluster.waitForCount(
    (l) => l.msg === 'recycling a worker: its replacement listens first' && [...workers.values()].includes(l['workerPid'] as number),
    2,
    'both first workers recycled',
    20_000,
  );
  await cluster.waitForCount(byMsg('worker retired'), 2, 'both retired', 20_000);
  await traffic.stop();

  for (const line of recycled) {
    t.assert.strictEqual(line['reason'], 'max-requests');
    const limit = line['requestLimit'] as number;
    t.assert.ok(limit >= 40 && limit <= 60, `limit ${limit} within maxRequests + jitter`);
    t.assert.ok((line['requests'] as number) >= limit);
  }
  t.assert.deepStrictEqual(traffic.errors, []);
  t.assert.ok(traffic.statuses.every((s) => s === 200));
  const metrics = (await get(metricsPort, '/metrics')).body;
  t.assert.ok((sample(metrics, 'flotilla_worker_restarts_total{reason="max-requests"}') ?? 0) >= 2);
});
