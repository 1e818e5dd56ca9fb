import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FORGED, PER_PING } from '../fixtures/hardening/forging-service.ts';
import { byMsg, get, sample, startCluster } from '../helpers/cluster.ts';

/**
 * Forged IPC reaching a real primary: a worker of the real CLI sends garbage,
 * malformed `flotilla:*` messages (wrong versions, protocol 1's metrics
 * answer, bad fields, huge strings, a boot failure of an unknown kind), and on
 * every heartbeat a metrics snapshot the aggregation cannot use and a pong
 * with impossible vitals. The primary drops and logs each flotilla message
 * with its reason, counts the worker up only once it really listens, neither
 * shuts down on a malformed boot failure nor replaces the worker, and keeps
 * serving and scraping; the cluster still shuts down cleanly.
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
  assert.equal(dropped[0]?.['level'], 'warn');

  for (let i = 0; i < 3; i++) assert.deepEqual(JSON.parse((await get(appPort, '/who')).body), { pid: workerPid });
  // the forgeries go on with every heartbeat, and are dropped every time
  const forgedOnPing = (reason: RegExp) => (line: Record<string, unknown>) =>
    line['msg'] === DROPPED && line['workerPid'] === workerPid && reason.test(String(line['message']));
  const seen = cluster.lines.filter(forgedOnPing(PER_PING.metrics)).length;
  await cluster.waitForCount(forgedOnPing(PER_PING.metrics), seen + 2, 'the forged snapshot of each heartbeat dropped');
  await cluster.waitFor(forgedOnPing(PER_PING.pong), 'the forged pong of each heartbeat dropped');

  // every scrape answers, and once a snapshot pushed after the requests has come, it counts them
  const requests = 'http_requests_total{method="GET",route="/who",status="200"}';
  let scrape = await get(metricsPort, '/metrics');
  for (const until = Date.now() + 5_000; sample(scrape.body, requests) !== 3 && Date.now() < until; ) {
    assert.equal(scrape.status, 200, scrape.body);
    await new Promise((resolve) => setTimeout(resolve, 100));
    scrape = await get(metricsPort, '/metrics');
  }
  assert.equal(scrape.status, 200, scrape.body);
  assert.equal(sample(scrape.body, requests), 3);
  assert.equal(sample(scrape.body, 'flotilla_workers_up'), 1);
  assert.equal(sample(scrape.body, 'flotilla_scrape_workers_missing'), 0, 'the real snapshots are kept');
  assert.ok((sample(scrape.body, 'flotilla_worker_resident_memory_bytes{worker="0"}') ?? 0) > 0, 'the real vitals are kept');
  assert.equal(scrape.body.includes('forged'), false);

  assert.equal(cluster.lines.filter(byMsg('worker listening')).length, 1, 'the worker counts as up once');
  assert.equal(cluster.lines.some(byMsg('worker exited unexpectedly: replacing it')), false);
  assert.equal(
    cluster.lines.some((line) => line.msg === 'cluster shutting down'),
    false,
    'a malformed boot failure does not stop the cluster',
  );
  assert.equal(cluster.stderr.includes('failed to start'), false, cluster.stderr);
  cluster.signal('SIGTERM');
  assert.equal((await cluster.exit(5_000)).code, 0);
});
