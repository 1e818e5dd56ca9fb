import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FORGED } from '../fixtures/hardening/forging-service.ts';
import { byMsg, get, sample, startCluster } from '../helpers/cluster.ts';

/**
 * Forged IPC reaching a real primary: a worker of the real CLI sends garbage,
 * malformed `flotilla:*` messages (wrong versions, bad fields, huge strings)
 * and a malformed metrics answer. The primary drops and logs each flotilla
 * message with its reason, counts the worker up only once it really listens,
 * and keeps serving and scraping; the cluster still shuts down cleanly.
 */

const SERVICE = fileURLToPath(new URL('../fixtures/hardening/forging-service.ts', import.meta.url));
const DROPPED = 'malformed worker message dropped';

test('the primary drops and logs forged worker messages, and keeps serving and scraping', async (t) => {
  const cluster = startCluster(t, { config: { service: SERVICE, workers: 1 } });
  const { appPort, metricsPort, workers } = await cluster.ready(1);
  const workerPid = workers.get(0);
  const dropped = await cluster.waitForCount(byMsg(DROPPED, { workerPid }), FORGED.length, DROPPED);
  const reasons = dropped.map((line) => String(line['message']));
  for (const [message, reason] of FORGED) {
    assert.ok(
      reasons.some((r) => reason.test(r)),
      `no '${DROPPED}' line for ${JSON.stringify(message).slice(0, 80)}; got:\n${reasons.join('\n')}`,
    );
  }
  assert.ok(
    reasons.every((r) => r.length < 200),
    'a dropped message is described, never echoed',
  );

  for (let i = 0; i < 3; i++) assert.deepEqual(JSON.parse((await get(appPort, '/who')).body), { pid: workerPid });
  const scrape = await get(metricsPort, '/metrics');
  assert.equal(scrape.status, 200, scrape.body);
  assert.equal(sample(scrape.body, 'http_requests_total{method="GET",route="/who",status="200"}'), 3);
  assert.equal(sample(scrape.body, 'flotilla_workers_up'), 1);
  assert.equal(scrape.body.includes('forged'), false);
  await cluster.waitFor(
    (line) => line.msg === DROPPED && /^flotilla:metrics-response: metrics\[0\] must be a metric/.test(String(line['message'])),
    'the forged metrics answer dropped',
  );

  assert.equal(cluster.lines.filter(byMsg('worker listening')).length, 1, 'the worker counts as up once');
  assert.equal(cluster.lines.some(byMsg('worker exited unexpectedly: replacing it')), false);
  cluster.signal('SIGTERM');
  assert.equal((await cluster.exit(5_000)).code, 0);
});
