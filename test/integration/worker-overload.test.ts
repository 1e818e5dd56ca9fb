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

test('balancing: kernel: new connections arriving beyond capacity wait in the workers’ accept queues and are shed 503 OVERLOADED, /health stays 200', async (t: TestContext) => {
  const config = { cluster: { balancing: 'kernel' as const }, overload: { delayTargetMs: 10, delayIntervalMs: 30 } };
  const cluster = startCluster(t, { config });
  const { appPort, metricsPort } = await cluster.ready();
  // an open loop: a new connection every millisecond, each 5 ms of work (under the 10 ms target alone), on
  // 2 workers: 2.5 times what they serve, whatever comes back
  const replies = await openLoop(
    () => get(appPort, '/busy?ms=5', 15_000),
    1,
    10_000,
    (reply) => reply.status === 503,
  );
  for (const reply of replies) t.assert.ok(reply.status === 200 || reply.status === 503, `status ${reply.status}`);
  const shed = replies.find((reply) => reply.status === 503);
  t.assert.ok(shed !== undefined, 'shed within 10 s of new connections at 2.5 times the capacity');
  t.assert.strictEqual((JSON.parse(shed.body) as { code: string }).code, 'OVERLOADED');
  t.assert.strictEqual((await get(appPort, '/health')).status, 200, 'shedding is no readiness failure');
  const text = await scrapeUntil(metricsPort, (body) => (sample(body, 'flotilla_requests_shed_total{reason="overload"}') ?? 0) >= 1);
  t.assert.strictEqual(sample(text, 'flotilla_requests_shed_total{reason="queue"}') ?? 0, 0, 'no primary queue with kernel');
});

test('balancing: kernel: a closed loop of 64 clients opening a new connection per request, at saturation, gets no 503', async (t: TestContext) => {
  const config = { cluster: { balancing: 'kernel' as const } };
  const cluster = startCluster(t, { config });
  const { appPort, metricsPort } = await cluster.ready();
  // 64 clients, each waiting for its answer before it connects again: the workers' queues stand far past
  // the 50 ms target (64 × 5 ms over 2 workers), but the load is bounded: nothing may be shed
  const client = async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await get(appPort, '/busy?ms=5', 15_000)).status);
    return statuses;
  };
  const statuses = (await Promise.all(Array.from({ length: 64 }, client))).flat();
  t.assert.deepStrictEqual(
    statuses.filter((status) => status !== 200),
    [],
  );
  const text = await scrapeUntil(
    metricsPort,
    (body) => (sample(body, 'http_requests_total{method="GET",route="/busy",status="200"}') ?? 0) >= 64 * 8,
  );
  t.assert.strictEqual(sample(text, 'flotilla_requests_shed_total{reason="overload"}') ?? 0, 0);
});

/**
 * An open loop: `send` is called every `everyMs` of wall time whatever was answered (missed sends are
 * made at once), until an answer satisfies `done` or `forMs` passed. Resolves with every answer.
 */
async function openLoop<T>(send: () => Promise<T>, everyMs: number, forMs: number, done: (answer: T) => boolean): Promise<T[]> {
  const pending: Promise<T>[] = [];
  let finished = false;
  const start = performance.now();
  while (!finished && performance.now() - start < forMs) {
    const due = Math.floor((performance.now() - start) / everyMs) + 1;
    while (pending.length < due)
      pending.push(
        send().then((answer) => {
          if (done(answer)) finished = true;
          return answer;
        }),
      );
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return Promise.all(pending);
}
