import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { describeInvalid, isWorkerMessage, type MetricFamily, msg } from '../../src/ipc/protocol.ts';
import { toMetricFamilies } from '../../src/metrics/metric-families.ts';
import { mergeFamilies } from '../../src/primary/merge-families.ts';
import { MetricsStore } from '../../src/primary/metrics-store.ts';

/**
 * What broke: a metrics message (then `flotilla:metrics-response`, now the
 * pushed `flotilla:metrics`) passed the guard as long as each metric had a
 * name and a values array, so one worker sending
 * `[{ name: 'x', values: [] }]` (no aggregator) made the aggregation throw
 * and every scrape of the primary a 500. The guard now checks what the
 * aggregation and the exposition rely on; every real registry still passes.
 * The primary keeps what passes in its `MetricsStore` (the latest snapshot of
 * each live worker, the counts of the retired ones) and renders every scrape
 * from there: whatever passes must go through updates, retirements and
 * renders without throwing, into well-formed lines.
 */

const overIpc = (m: unknown): unknown => JSON.parse(JSON.stringify(m));
const NONE = new Set<string>();

async function realMetrics(): Promise<MetricFamily[]> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Counter({ name: 'c_total', help: 'c', labelNames: ['route'], registers: [registry] }).inc({ route: '/books/:id' });
  new Gauge({ name: 'g', help: 'g', registers: [registry] }).set(Number.NaN);
  new Gauge({ name: 'g_inf', help: 'g', registers: [registry] }).set(Number.POSITIVE_INFINITY);
  new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['status'], registers: [registry] }).observe({ status: 200 }, 0.2);
  new Summary({ name: 's', help: 's', registers: [registry], aggregator: 'average' }).observe(3);
  return overIpc(toMetricFamilies(await registry.getMetricsAsJSON())) as MetricFamily[];
}

/** A line of the exposition: a comment, or a sample `name{labels} value` whose labels are well formed. */
const LINE =
  /^(?:# (?:HELP|TYPE) [^\n]*|[a-zA-Z_:][\w:]*(?:\{[a-zA-Z_]\w*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_]\w*="(?:[^"\\\n]|\\[\\"n])*")*\})? \S+|)$/;

test('real metrics pass the guard and aggregate, pushed periodically or as the final snapshot', async () => {
  const metrics = await realMetrics();
  for (const final of [false, true]) {
    const message = overIpc(msg.metrics(metrics, final));
    assert.ok(isWorkerMessage(message) && message.type === 'flotilla:metrics');
    assert.equal(message.final, final);
  }
  const text = mergeFamilies([metrics, metrics], NONE).join('\n\n');
  assert.match(text, /^c_total\{route="\/books\/:id"\} 2$/m);
  assert.match(text, /^g Nan$/m);
  assert.match(text, /^g_inf \+Inf$/m);

  const store = new MetricsStore({ now: () => 0 });
  store.update('1', metrics);
  store.update('2', metrics);
  assert.equal(store.render(NONE).join('\n\n'), text, 'the store renders what the merge renders');
  store.retire('2');
  const after = store.render(NONE).join('\n\n');
  assert.match(after, /^c_total\{route="\/books\/:id"\} 2$/m, 'a retired worker still counts');
  assert.match(after, /^g Nan$/m, 'its gauges do not');
});

test('metrics the aggregation cannot use are refused', () => {
  const base = { name: 'm', help: 'h', type: 'counter', aggregator: 'sum', series: ['m'], values: [1] };
  const broken = [
    { name: 'm', values: [] },
    { name: 'forged', help: 'h', type: 'gauge', values: [{ value: 'x', labels: {} }] },
    { ...base, aggregator: undefined },
    { ...base, aggregator: 'constructor' },
    { ...base, aggregator: '__proto__' },
    { ...base, type: 'info' },
    { ...base, help: undefined },
    { ...base, name: 'has space' },
    { ...base, name: '' },
    { ...base, values: ['x'] },
    { ...base, values: [{ value: 1 }] },
    { ...base, series: ['bad name'] },
    { ...base, series: ['m{a={"nested":1}}'] },
    { ...base, series: [null] },
    { ...base, buckets: ['1'] },
  ];
  for (const metric of broken) {
    const message = overIpc(msg.metrics([metric as MetricFamily]));
    assert.equal(isWorkerMessage(message), false, JSON.stringify(metric));
    assert.match(describeInvalid(message), /^flotilla:metrics: metrics\[0\] must be a metric family/);
  }
});

test('property: whatever passes the guard is stored, retired and rendered without throwing, into well-formed lines', async () => {
  const real = await realMetrics();
  const mutate = fc.record({
    index: fc.nat(),
    field: fc.constantFrom('name', 'help', 'type', 'aggregator', 'series', 'values', 'keys', 'buckets', 'entry'),
    value: fc.oneof(
      fc.anything(),
      fc.constantFrom('sum', 'omit', 'min', 'gauge', 'histogram', 'x_bucket', 'x{a="1"}', 'a="1",b="2"', '+Inf', 'NaN', null, [], ['1']),
    ),
  });
  fc.assert(
    fc.property(fc.array(mutate, { maxLength: 3 }), fc.boolean(), (mutations, final) => {
      const metrics = structuredClone(real) as unknown as Record<string, unknown>[];
      for (const m of mutations) {
        const metric = metrics[m.index % metrics.length] as Record<string, unknown>;
        if (m.field !== 'entry') metric[m.field] = m.value;
        else {
          const lists = [metric['series'], metric['values'], metric['keys'], metric['buckets']].filter(Array.isArray) as unknown[][];
          const list = lists[m.index % Math.max(1, lists.length)];
          if (list !== undefined && list.length > 0) list[m.index % list.length] = m.value;
        }
      }
      const message = overIpc(msg.metrics(metrics as unknown as MetricFamily[], final));
      if (!isWorkerMessage(message) || message.type !== 'flotilla:metrics') return;
      const wellFormed = (blocks: string[]) => {
        for (const line of blocks.join('\n\n').split('\n')) assert.match(line, LINE);
      };
      wellFormed(mergeFamilies([message.metrics, real], NONE));
      // The primary's path: the forged snapshot beside a real worker's, both live, then the forger retired
      // (its counts folded into the retired totals), then the honest one too.
      const store = new MetricsStore({ now: () => 0 });
      store.update('forger', message.metrics);
      store.update('honest', real);
      wellFormed(store.render(NONE));
      store.retire('forger');
      wellFormed(store.render(NONE));
      store.update('next', real);
      store.retire('honest');
      wellFormed(store.render(NONE));
      assert.equal(store.update('forger', message.metrics), false, 'a late snapshot of a retired worker is ignored');
    }),
    { numRuns: 300 },
  );
});
