import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Gauge, Histogram, type MetricObjectWithValues, type MetricValue, Registry } from 'prom-client';
import { isWorkerMessage, msg } from '../../src/ipc/protocol.ts';
import { toMetricFamilies } from '../../src/metrics/metric-families.ts';

type MetricJson = MetricObjectWithValues<MetricValue<string>>;

test("samples are written as prom-client's exposition writes them: same label order, same escaping", async () => {
  const registry = new Registry();
  const counter = new Counter({ name: 'c_total', help: 'back\\slash\nnew line', labelNames: ['route', 'code'], registers: [registry] });
  counter.inc({ route: 'a"b\\c\nd', code: 200 });
  new Counter({ name: 'plain_total', help: 'p', registers: [registry] }).inc(3);
  const [family, plain] = toMetricFamilies(await registry.getMetricsAsJSON());
  assert.deepEqual(family, {
    name: 'c_total',
    help: 'back\\slash\nnew line',
    type: 'counter',
    aggregator: 'sum',
    series: ['c_total{route="a\\"b\\\\c\\nd",code="200"}'],
    values: [1],
    keys: ['c_total{code="200",route="a\\"b\\\\c\\nd"}'],
  });
  assert.deepEqual(plain?.series, ['plain_total']);
  assert.equal(plain?.keys, undefined, 'no keys when every label set is in canonical order');
  const text = await registry.metrics();
  assert.ok(text.includes(`\n${family?.series[0]} 1\n`), 'the series is the line prom-client writes');
});

test('NaN and the infinities survive JSON; a label left undefined is left out, as JSON would', () => {
  const json = [
    {
      name: 'g',
      help: 'g',
      type: 'gauge',
      aggregator: 'sum',
      values: [
        { value: Number.NaN, labels: { a: '1' } },
        { value: Number.POSITIVE_INFINITY, labels: { a: '2', b: undefined } },
        { value: Number.NEGATIVE_INFINITY, labels: {} },
        { value: -0, labels: { le: '3', a: '4' } },
      ],
    },
  ] as unknown as MetricJson[];
  const [family] = JSON.parse(JSON.stringify(toMetricFamilies(json)));
  assert.deepEqual(family.values, ['NaN', '+Inf', '-Inf', 0]);
  assert.deepEqual(family.series, ['g{a="1"}', 'g{a="2"}', 'g', 'g{le="3",a="4"}']);
  assert.equal(family.keys, undefined, '`le` first, the other labels by name: the canonical order');
});

test('a histogram goes as label sets with their bucket counts, sum and count', async () => {
  const registry = new Registry();
  const histogram = new Histogram({
    name: 'h_seconds',
    help: 'h',
    labelNames: ['status', 'method'],
    buckets: [0.1, 1],
    registers: [registry],
  });
  histogram.observe({ status: '200', method: 'GET' }, 0.5);
  histogram.observe({ status: '200', method: 'GET' }, 5);
  new Histogram({ name: 'bare', help: 'b', buckets: [1], registers: [registry] }).observe(0.5);
  const [labelled, bare] = toMetricFamilies(await registry.getMetricsAsJSON());
  assert.deepEqual(labelled, {
    name: 'h_seconds',
    help: 'h',
    type: 'histogram',
    aggregator: 'sum',
    series: ['status="200",method="GET"'],
    values: [0, 1, 2, 5.5, 2],
    keys: ['method="GET",status="200"'],
    buckets: ['0.1', '1', '+Inf'],
  });
  assert.deepEqual(bare, {
    name: 'bare',
    help: 'b',
    type: 'histogram',
    aggregator: 'sum',
    series: [''],
    values: [1, 1, 0.5, 1],
    buckets: ['1', '+Inf'],
  });
  assert.deepEqual(toMetricFamilies(await registry.getMetricsAsJSON(), { histograms: false })[1]?.series, [
    'bare_bucket{le="1"}',
    'bare_bucket{le="+Inf"}',
    'bare_sum',
    'bare_count',
  ]);
});

test("a 'histogram' whose samples are not prom-client's goes sample by sample", () => {
  const bucket = (le: unknown, labels: Record<string, unknown> = {}) => ({ value: 1, metricName: 'x_bucket', labels: { le, ...labels } });
  const tail = (labels: Record<string, unknown> = {}) => [
    { value: 2, metricName: 'x_sum', labels },
    { value: 1, metricName: 'x_count', labels },
  ];
  const irregular = [
    [bucket(1), bucket('+Inf'), ...tail(), bucket(1)],
    [bucket(1), bucket(1), ...tail()],
    [bucket(undefined), ...tail()],
    [bucket(1, { a: 'x' }), ...tail({ a: 'y' })],
    [bucket(1), bucket('+Inf'), ...tail({}), bucket(2), bucket('+Inf'), ...tail({ a: '1' })],
    [{ value: 1, metricName: 'x_bucket', labels: { a: 'x', le: 1 } }, ...tail({ a: 'x' })],
    [bucket(1), { value: 2, metricName: 'x_sum', labels: {} }],
  ];
  for (const values of irregular) {
    const [family] = toMetricFamilies([{ name: 'x', help: 'x', type: 'histogram', aggregator: 'sum', values }] as unknown as MetricJson[]);
    assert.equal(family?.buckets, undefined, JSON.stringify(values));
    assert.equal(family?.series.length, values.length);
    assert.ok(isWorkerMessage(msg.metrics([family!])));
  }
});

test("every family of a worker's registry passes the primary's guard after crossing IPC", async () => {
  const registry = new Registry();
  new Gauge({ name: 'weird', help: 'w', labelNames: ['le', 'zone'], registers: [registry] }).set({ zone: '"}\n', le: 'x' }, Number.NaN);
  new Counter({ name: 'c_total', help: 'c', labelNames: ['b', 'a'], registers: [registry] }).inc({ b: '\\', a: '' });
  const message = JSON.parse(JSON.stringify(msg.metrics(toMetricFamilies(await registry.getMetricsAsJSON()), true)));
  assert.ok(isWorkerMessage(message));
});
