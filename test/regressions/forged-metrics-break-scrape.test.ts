import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { isWorkerMessage, msg } from '../../src/ipc/protocol.ts';

/**
 * What broke: a `flotilla:metrics-response` passed the guard as long as each
 * metric had a name and a values array, so one worker answering
 * `[{ name: 'x', values: [] }]` (no aggregator) made prom-client's aggregation
 * throw and every scrape of the primary a 500. The guard now checks what the
 * aggregation relies on; every real `getMetricsAsJSON()` still passes.
 */

const overIpc = (m: unknown): unknown => JSON.parse(JSON.stringify(m));

async function realMetrics(): Promise<unknown[]> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Counter({ name: 'c_total', help: 'c', labelNames: ['route'], registers: [registry] }).inc({ route: '/books/:id' });
  new Gauge({ name: 'g', help: 'g', registers: [registry] }).set(Number.NaN);
  new Gauge({ name: 'g_inf', help: 'g', registers: [registry] }).set(Number.POSITIVE_INFINITY);
  new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['status'], registers: [registry] }).observe({ status: 200 }, 0.2);
  new Summary({ name: 's', help: 's', registers: [registry], aggregator: 'average' }).observe(3);
  return (overIpc(await registry.getMetricsAsJSON()) as unknown[]) ?? [];
}

test('real metrics pass the guard and aggregate', async () => {
  const metrics = await realMetrics();
  const message = overIpc(msg.metricsResponse('id', metrics));
  assert.ok(isWorkerMessage(message));
  const text = await AggregatorRegistry.aggregate([metrics, metrics] as never).metrics();
  assert.match(text, /^c_total\{route="\/books\/:id"\} 2$/m);
});

test('metrics the aggregation cannot use are refused', () => {
  const base = { name: 'm', help: 'h', type: 'counter', aggregator: 'sum', values: [{ value: 1, labels: {} }] };
  const broken = [
    { name: 'm', values: [] },
    { ...base, aggregator: undefined },
    { ...base, aggregator: 'constructor' },
    { ...base, aggregator: '__proto__' },
    { ...base, type: 'info' },
    { ...base, help: undefined },
    { ...base, name: 'has space' },
    { ...base, name: '' },
    { ...base, values: [{ value: 'x', labels: {} }] },
    { ...base, values: [{ value: 1, labels: null }] },
    { ...base, values: [{ value: 1 }] },
    { ...base, values: [{ value: 1, labels: { a: { nested: 1 } } }] },
    { ...base, values: [{ value: 1, labels: {}, metricName: 'bad name' }] },
    { ...base, values: [null] },
  ];
  for (const metric of broken) assert.equal(isWorkerMessage(msg.metricsResponse('id', [metric])), false, JSON.stringify(metric));
});

test('property: whatever passes the guard aggregates without throwing', async () => {
  const real = await realMetrics();
  const mutate = fc.record({
    index: fc.nat(),
    field: fc.constantFrom('name', 'help', 'type', 'aggregator', 'values', 'value', 'labels', 'metricName'),
    value: fc.oneof(fc.anything(), fc.constantFrom('sum', 'omit', 'min', 'gauge', 'histogram', 'x_bucket', null)),
  });
  fc.assert(
    fc.property(fc.array(mutate, { maxLength: 3 }), (mutations) => {
      const metrics = structuredClone(real) as Record<string, unknown>[];
      for (const m of mutations) {
        const metric = metrics[m.index % metrics.length] as Record<string, unknown>;
        const values = metric['values'];
        const entry = Array.isArray(values) && values.length > 0 ? values[m.index % values.length] : undefined;
        if (!['value', 'labels', 'metricName'].includes(m.field)) metric[m.field] = m.value;
        else if (typeof entry === 'object' && entry !== null) (entry as Record<string, unknown>)[m.field] = m.value;
      }
      const message = overIpc(msg.metricsResponse('id', metrics));
      if (!isWorkerMessage(message) || message.type !== 'flotilla:metrics-response') return;
      const registry = AggregatorRegistry.aggregate([message.metrics, real] as never);
      void registry.metrics();
    }),
    { numRuns: 300 },
  );
});
