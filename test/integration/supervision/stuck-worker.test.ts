import { type TestContext, test } from 'node:test';
import { isAlive } from '../../../tools/proc.ts';
import { allGone, byMsg, get, sample, startCluster } from '../../helpers/cluster.ts';

const WATCHDOG = { cluster: { heartbeatIntervalMs: 200, heartbeatTimeoutMs: 2_000 } };

/** Sends `GET /hang` to whichever worker takes it; resolves with that worker's pid from its stack line. */
async function hangOne(cluster: ReturnType<typeof startCluster>, appPort: number): Promise<number> {
  get(appPort, '/hang', 60_000).catch(() => {}); // never answered: the worker is killed with it
  const blocked = await cluster.waitFor(
    byMsg('event loop blocked: the JavaScript stack of the main thread'),
    'the watchdog thread logging the stuck stack',
  );
  return blocked.pid as number;
}

test('a worker stuck in an endless loop is replaced, its stack logged, its process killed', async (t: TestContext) => {
  const cluster = startCluster(t, { config: WATCHDOG });
  const { appPort, metricsPort } = await cluster.ready();
  const stuckAt = Date.now();
  const stuck = await hangOne(cluster, appPort);

  const blocked = cluster.lines.find(byMsg('event loop blocked: the JavaScript stack of the main thread'));
  const stack = blocked?.['stack'] as string[];
  t.assert.match(stack[0] ?? '', /^handler \(.*fixtures\/cluster\/service\.ts:\d+:\d+\)$/, 'the top frame is the looping handler');

  const found = await cluster.waitFor(
    byMsg('worker stopped answering heartbeats (event loop stuck): starting a replacement, then killing it'),
    'the watchdog',
    10_000,
  );
  t.assert.strictEqual(found['workerPid'], stuck);
  t.assert.ok((found['silentMs'] as number) >= 2_000);
  // its first request told the primary before the handler blocked: no boot failure, however young it was
  t.assert.strictEqual(found['receivedRequests'], true);
  const replacement = await cluster.waitFor(
    (l) => l.msg === 'worker listening' && l['slot'] === found['slot'] && l['workerPid'] !== stuck,
    'the replacement',
  );
  t.diagnostic(`replacement listening ${Date.parse(String(replacement['time'])) - stuckAt} ms after the stuck request`);
  await allGone([stuck], 2_000);

  for (let i = 0; i < 6; i++) t.assert.strictEqual((await get(appPort, '/pid')).status, 200);
  const metrics = (await get(metricsPort, '/metrics')).body;
  t.assert.strictEqual(sample(metrics, 'flotilla_worker_restarts_total{reason="heartbeat-timeout"}'), 1);
  t.assert.strictEqual(sample(metrics, 'flotilla_workers_up'), 2);
});

test('kill -9 of the primary while a worker is stuck leaves no process behind', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { heartbeatTimeoutMs: 0 } } });
  const { appPort, workers } = await cluster.ready();
  const stuck = await hangOne(cluster, appPort);
  t.assert.ok(isAlive(stuck));

  process.kill(cluster.pid, 'SIGKILL');
  // the healthy worker shuts down gracefully on the lost channel; the stuck one is ended by its watchdog thread
  await allGone([cluster.pid, ...workers.values()], 5_000);
});
