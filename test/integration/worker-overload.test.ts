import { type TestContext, test } from 'node:test';
import { byMsg, get, sample, scrapeUntil, startCluster } from '../helpers/cluster.ts';
import { openSocket } from '../helpers/http.ts';

test('a worker answers a handler past timeouts.handlerMs 503 HANDLER_TIMEOUT and aborts its signal with a TimeoutError', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { timeouts: { handlerMs: 200 } } });
  const { appPort, metricsPort } = await cluster.ready();

  const reply = await get(appPort, '/stuck');
  t.assert.strictEqual(reply.status, 503);
  t.assert.strictEqual((JSON.parse(reply.body) as { code: string }).code, 'HANDLER_TIMEOUT');
  const aborted = await cluster.waitFor(byMsg('fixture stuck aborted'), 'the handler saw its signal abort');
  t.assert.strictEqual(aborted['reason'], 'TimeoutError');
  const warning = await cluster.waitFor(byMsg('handler timed out'), 'the warn line');
  t.assert.strictEqual(warning['route'], '/stuck');
  t.assert.strictEqual(warning['timeoutMs'], 200);
  await scrapeUntil(metricsPort, (text) => sample(text, 'flotilla_requests_shed_total{reason="handler-timeout"}') === 1);
});

test('a worker does not run the handler of a request whose client left before it started', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, metricsPort } = await cluster.ready();

  const socket = await openSocket(appPort);
  socket.on('error', () => {});
  socket.write('GET /gated?ms=300 HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await cluster.waitFor(byMsg('fixture gate waiting'), 'the request in its onRequest hook');
  socket.destroy();
  const text = await scrapeUntil(metricsPort, (body) => sample(body, 'flotilla_requests_shed_total{reason="client-gone"}') === 1);
  t.assert.strictEqual(sample(text, 'fixture_gated_runs_total'), 0, 'the handler never ran');
  t.assert.strictEqual(cluster.lines.filter(byMsg('fixture gated handler ran')).length, 0);
  t.assert.strictEqual(sample(text, 'http_requests_total{method="GET",route="/gated",status="499"}'), 1);
  t.assert.strictEqual(sample(text, 'flotilla_admission_state'), 0, 'no worker is shedding');
});

test('balancing: kernel: new connections waiting in the workers’ accept queues are shed 503 OVERLOADED, /health stays 200', async (t: TestContext) => {
  const config = { cluster: { balancing: 'kernel' as const }, overload: { delayTargetMs: 10, delayIntervalMs: 30 } };
  const cluster = startCluster(t, { config });
  const { appPort, metricsPort } = await cluster.ready();
  // each request alone (5 ms) is under the 10 ms target: only the wait in a worker's listener makes one late
  let shed: Awaited<ReturnType<typeof get>> | undefined;
  for (let round = 0; round < 50 && shed === undefined; round++) {
    const replies = await Promise.all(Array.from({ length: 40 }, () => get(appPort, '/busy?ms=5', 15_000)));
    for (const reply of replies) t.assert.ok(reply.status === 200 || reply.status === 503, `status ${reply.status}`);
    shed = replies.find((reply) => reply.status === 503);
  }
  t.assert.ok(shed !== undefined, 'shed within 50 rounds of 40 new connections');
  t.assert.strictEqual((JSON.parse(shed.body) as { code: string }).code, 'OVERLOADED');
  t.assert.strictEqual((await get(appPort, '/health')).status, 200, 'shedding is no readiness failure');
  const text = await scrapeUntil(metricsPort, (body) => (sample(body, 'flotilla_requests_shed_total{reason="overload"}') ?? 0) >= 1);
  t.assert.strictEqual(sample(text, 'flotilla_requests_shed_total{reason="queue"}') ?? 0, 0, 'no primary queue with kernel');
});
