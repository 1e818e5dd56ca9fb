import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { AggregatorRegistry, Counter, Registry } from 'prom-client';
import { isPrimaryMessage, type MetricFamily } from '../../src/ipc/protocol.ts';
import { toMetricFamilies } from '../../src/metrics/metric-families.ts';
import { PromMetricsCollector } from '../../src/metrics/prom-collector.ts';
import { MetricsAggregator } from '../../src/primary/metrics-aggregator.ts';
import { PrimaryMetrics } from '../../src/primary/primary-metrics.ts';

const TIMEOUT_MS = 100;

/** How a stand-in worker answers a metrics request: in time, never, too late, or not at all because it is gone. */
type Behaviour = 'answer' | 'silent' | 'late' | 'closed' | 'dies';

/** A cluster worker as the aggregator sees it: `send` a request, the answer comes back through `aggregator.answer`. */
function worker(aggregator: () => MetricsAggregator, registry: Registry, behaviour: Behaviour): Worker {
  const events = new EventEmitter();
  return Object.assign(events, {
    send(message: unknown, callback: (error: Error | null) => void) {
      assert.ok(isPrimaryMessage(message) && message.type === 'flotilla:metrics-request');
      if (behaviour === 'closed') {
        process.nextTick(callback, Object.assign(new Error('Channel closed'), { code: 'ERR_IPC_CHANNEL_CLOSED' }));
        return false;
      }
      process.nextTick(callback, null);
      if (behaviour === 'dies') setTimeout(() => events.emit('disconnect'), 5);
      if (behaviour === 'silent' || behaviour === 'dies') return true;
      void registry.getMetricsAsJSON().then((json) => {
        const families: MetricFamily[] = JSON.parse(JSON.stringify(toMetricFamilies(json)));
        setTimeout(() => aggregator().answer(message.id, families), behaviour === 'late' ? TIMEOUT_MS * 2 : 0);
      });
      return true;
    },
  }) as unknown as Worker;
}

function workerRegistry(requests: number): Registry {
  const registry = new Registry();
  const collector = new PromMetricsCollector(registry);
  for (let i = 0; i < requests; i++) collector.recordRequest({ method: 'GET', route: '/books/:id', status: 200, durationMs: 12 });
  return registry;
}

function cluster(behaviours: Behaviour[], extra: Registry[] = []) {
  const metrics = new PrimaryMetrics();
  const registries = behaviours.map((_, i) => workerRegistry(i + 1));
  let aggregator: MetricsAggregator | undefined;
  const workers = behaviours.map((b, i) => worker(() => aggregator as MetricsAggregator, registries[i] as Registry, b));
  aggregator = new MetricsAggregator(
    () => workers,
    metrics,
    () => extra,
    TIMEOUT_MS,
  );
  return { aggregator, metrics, registries };
}

const sample = (text: string, line: string) =>
  text
    .split('\n')
    .find((l) => l.startsWith(`${line} `))
    ?.slice(line.length + 1);
const REQUESTS = 'http_requests_total{method="GET",route="/books/:id",status="200"}';

test("one scrape: the workers' families as prom-client aggregates them, then the primary's own registry", async () => {
  const service = new Registry();
  new Counter({ name: 'orders_total', help: 'Orders.', registers: [service] }).inc(2);
  const { aggregator, registries } = cluster(['answer', 'answer'], [service]);
  const text = await aggregator.scrape();
  const lists = await Promise.all([...registries, service].map((r) => r.getMetricsAsJSON()));
  const workersPart = await AggregatorRegistry.aggregate(lists).metrics();
  assert.ok(text.startsWith(`${workersPart}\n# HELP flotilla_workers_up `), text.slice(0, 300));
  assert.equal(sample(text, REQUESTS), '3');
  assert.equal(sample(text, 'orders_total'), '2');
  assert.equal(sample(text, 'flotilla_scrape_workers_missing'), '0');
  assert.match(text, /^flotilla_primary_process_cpu_user_seconds_total \d/m);
  assert.ok(text.endsWith('\n') && !text.endsWith('\n\n'));
  assert.equal(aggregator.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

test('a worker that does not answer in time is left out and counted; its late answer is dropped', async () => {
  const { aggregator } = cluster(['answer', 'late', 'silent']);
  const started = performance.now();
  const text = await aggregator.scrape();
  assert.ok(performance.now() - started >= TIMEOUT_MS - 5, 'the scrape waited for the slow workers');
  assert.equal(sample(text, REQUESTS), '1', 'only the first worker counted');
  assert.equal(sample(text, 'flotilla_scrape_workers_missing'), '2');
  await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
  const next = await aggregator.scrape();
  assert.equal(sample(next, REQUESTS), '1', 'a late answer never lands in another scrape');
});

test('a worker whose channel is closed, or that dies during the scrape, is counted missing at once', async () => {
  const { aggregator } = cluster(['closed', 'answer', 'dies']);
  const started = performance.now();
  const text = await aggregator.scrape();
  assert.ok(performance.now() - started < TIMEOUT_MS, 'no wait for a worker that cannot answer');
  assert.equal(sample(text, REQUESTS), '2');
  assert.equal(sample(text, 'flotilla_scrape_workers_missing'), '2');
});

test('concurrent scrapes each get every answer; no worker at all still gives the primary metrics', async () => {
  const { aggregator } = cluster(['answer', 'answer', 'answer']);
  const texts = await Promise.all([aggregator.scrape(), aggregator.scrape(), aggregator.scrape()]);
  for (const text of texts) assert.equal(sample(text, REQUESTS), '6');
  const empty = await cluster([]).aggregator.scrape();
  assert.ok(empty.startsWith('# HELP flotilla_workers_up '));
  assert.equal(sample(empty, 'flotilla_scrape_workers_missing'), '0');
});
