import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { byMsg, startCluster, tempFiles, untilEachAnswered } from '../helpers/cluster.ts';

const OTEL = fileURLToPath(new URL('../fixtures/tracing/otel.mjs', import.meta.url));

/** A span as the OTLP/HTTP JSON export carries it (the fields the test reads). */
interface OtlpSpan {
  traceId: string;
  name: string;
  /** 2: SERVER, 1: INTERNAL. */
  kind: number;
}

/** An OTLP/HTTP receiver of traces in JSON: every span of every export request it got. */
async function otlpReceiver(t: TestContext): Promise<{ endpoint: string; spans: OtlpSpan[] }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const exported = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
      for (const resource of exported.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans };
}

/** `GET /who` on a connection of its own: the worker's pid, and the trace id of its span (the `traceresponse` header). */
function whoTraced(port: number): Promise<{ pid: number; traceId: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/who', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        const traceId = String(res.headers['traceresponse'] ?? '').split('-')[1] ?? '';
        resolve({ pid: (JSON.parse(body) as { pid: number }).pid, traceId });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('preload registers the current NodeSDK: the spans of both workers, the cron span and the last requests reach OTLP', async (t: TestContext) => {
  const receiver = await otlpReceiver(t);
  const preloadLog = join(tempFiles(t, { 'preload.log': '' }), 'preload.log');
  const cluster = startCluster(t, {
    config: { preload: [OTEL] },
    env: {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // nothing is exported on a timer during the test: what arrives was flushed at the shutdown
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      FIXTURE_PRELOAD_LOG: preloadLog,
    },
  });
  const { workers, appPort } = await cluster.ready();
  await cluster.waitFor(byMsg('fixture tick'), 'a cron tick in the service thread', 15_000);

  const answered = await untilEachAnswered(
    workers.values(),
    () => whoTraced(appPort),
    (a) => a.pid,
    8,
  );
  t.assert.ok(
    answered.every((a) => /^[0-9a-f]{32}$/.test(a.traceId)),
    'every answer carries its recorded span (traceresponse)',
  );
  t.assert.deepStrictEqual(new Set(answered.map((a) => a.pid)), new Set(workers.values()), 'both workers answered');

  // the last requests, answered just before the signal: their spans still wait in the SDK's batch
  const last = await Promise.all([whoTraced(appPort), whoTraced(appPort), whoTraced(appPort)]);
  cluster.signal('SIGTERM');
  const exit = await cluster.exit(15_000);
  t.assert.strictEqual(exit.code, 0, cluster.tail());

  const server = new Map(receiver.spans.filter((s) => s.kind === 2).map((s) => [s.traceId, s]));
  for (const { traceId } of [...answered, ...last]) {
    t.assert.strictEqual(server.get(traceId)?.name, 'GET /who', `the SERVER span of trace ${traceId} arrived`);
  }
  t.assert.ok(
    receiver.spans.some((s) => s.name === 'cron tick'),
    `the service thread's cron span arrived (got ${[...new Set(receiver.spans.map((s) => s.name))].join(', ')})`,
  );

  // where the preload ran: each worker's main thread and the primary's service thread, never the primary's
  // main thread nor a worker's watchdog thread
  const loads = readFileSync(preloadLog, 'utf8').trim().split('\n').sort();
  const expected = [...[...workers.values()].map((pid) => `${pid} main`), `${cluster.pid} thread`].sort();
  t.assert.deepStrictEqual(loads, expected);
});
