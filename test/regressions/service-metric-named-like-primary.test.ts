import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { MetricsAggregator } from '../../src/primary/metrics-aggregator.ts';
import { PrimaryMetrics } from '../../src/primary/primary-metrics.ts';

// A service metric named like one of the primary's (flotilla_workers_up) made the registry merge throw:
// every scrape answered 500. The primary's own series now win the clash.
test('a service metric named like a primary metric does not break the scrape', async () => {
  const metrics = new PrimaryMetrics();
  metrics.workersUp.set(2);
  const service = new Registry();
  new Counter({ name: 'flotilla_workers_up', help: 'a clash', registers: [service] }).inc(7);
  new Counter({ name: 'orders_total', help: 'a service metric', registers: [service] }).inc(3);
  const aggregator = new MetricsAggregator(
    () => [],
    metrics,
    () => [service],
    100,
  );
  const text = await aggregator.scrape();
  assert.match(text, /^flotilla_workers_up 2$/m);
  assert.doesNotMatch(text, /flotilla_workers_up 7/);
  assert.match(text, /^orders_total 3$/m);
});
