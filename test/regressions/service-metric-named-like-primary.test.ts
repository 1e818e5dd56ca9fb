import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Gauge, Registry } from 'prom-client';
import { isWorkerMessage, type MetricFamily, msg } from '../../src/ipc/protocol.ts';
import { toMetricFamilies } from '../../src/metrics/metric-families.ts';
import { MetricsStore } from '../../src/primary/metrics-store.ts';
import { PrimaryMetrics } from '../../src/primary/primary-metrics.ts';

// A service metric named like one of the primary's (flotilla_workers_up) made the registry merge throw:
// every scrape answered 500. The primary's own series now win the clash. A scrape is rendered as
// `Primary.scrape()` renders it: the store's sums without the names of the primary's registry, then that registry.

/** A process's registry as it reaches the primary: pushed as `flotilla:metrics`, over IPC, through the guard. */
async function pushed(registry: Registry, final = false): Promise<MetricFamily[]> {
  const message: unknown = JSON.parse(JSON.stringify(msg.metrics(toMetricFamilies(await registry.getMetricsAsJSON()), final)));
  assert.ok(isWorkerMessage(message) && message.type === 'flotilla:metrics', 'the snapshot passes the guard');
  return message.metrics;
}

/** What `Primary.scrape()` answers: the store rendered without the primary's names, then the primary's registry. */
async function scrape(store: MetricsStore, metrics: PrimaryMetrics): Promise<string> {
  const primary = metrics.registry;
  const reserved = new Set(primary.getMetricsAsArray().map((m) => (m as { name: string }).name));
  const blocks = store.render(reserved);
  blocks.push((await primary.metrics()).slice(0, -1));
  return `${blocks.join('\n\n')}\n`;
}

/** A service's registry, with metrics named like the primary's beside one of its own. */
function serviceRegistry(clash: number, orders: number): Registry {
  const service = new Registry();
  new Counter({ name: 'flotilla_workers_up', help: 'a clash', registers: [service] }).inc(clash);
  new Gauge({ name: 'flotilla_worker_resident_memory_bytes', help: 'a labelled clash', labelNames: ['worker'], registers: [service] }).set(
    { worker: '0' },
    1,
  );
  new Counter({ name: 'orders_total', help: 'a service metric', registers: [service] }).inc(orders);
  return service;
}

test('a service metric named like a primary metric does not break the scrape', async () => {
  const metrics = new PrimaryMetrics();
  metrics.workersUp.set(2);
  metrics.observeWorker(0, { elu: 0.5, delayP50Ms: 1, delayP99Ms: 2, delayMaxMs: 3, rssBytes: 1234 });
  const store = new MetricsStore();
  // two workers and the service thread, each with the clashing metrics
  store.update('101', await pushed(serviceRegistry(7, 3)));
  store.update('102', await pushed(serviceRegistry(7, 4)));
  store.update('service', await pushed(serviceRegistry(7, 0)));

  const text = await scrape(store, metrics);
  assert.match(text, /^flotilla_workers_up 2$/m);
  assert.doesNotMatch(text, /flotilla_workers_up (7|14|21)/);
  assert.equal(text.match(/^# TYPE flotilla_workers_up /gm)?.length, 1, 'one family of that name');
  assert.match(text, /^flotilla_worker_resident_memory_bytes\{worker="0"\} 1234$/m);
  assert.equal(text.match(/^# TYPE flotilla_worker_resident_memory_bytes /gm)?.length, 1);
  assert.match(text, /^orders_total 7$/m);

  // a worker gone: what it counted stays in the sums, and its clashing counter stays out of them
  store.update('101', await pushed(serviceRegistry(7, 3), true));
  store.retire('101');
  const after = await scrape(store, metrics);
  assert.match(after, /^flotilla_workers_up 2$/m);
  assert.equal(after.match(/^# TYPE flotilla_workers_up /gm)?.length, 1);
  assert.match(after, /^orders_total 7$/m);
});
