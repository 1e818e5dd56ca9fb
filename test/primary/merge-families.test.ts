import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type Aggregator,
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
  Summary,
} from 'prom-client';
import { isWorkerMessage, type MetricFamily, msg } from '../../src/ipc/protocol.ts';
import { toMetricFamilies } from '../../src/metrics/metric-families.ts';
import { PromMetricsCollector } from '../../src/metrics/prom-collector.ts';
import { FamilyMerger, mergeFamilies } from '../../src/primary/merge-families.ts';

type MetricJson = MetricObjectWithValues<MetricValue<string>>;
type Type = 'counter' | 'gauge' | 'histogram' | 'summary';

/** The families of each process, sent over IPC as JSON and checked by the primary's guard, merged into exposition text. */
function viaIpc(lists: readonly MetricJson[][], histograms: readonly boolean[] = []): string {
  const received = lists.map((list, i) => {
    const message: unknown = JSON.parse(JSON.stringify(msg.metrics(toMetricFamilies(list, { histograms: histograms[i] ?? true }))));
    assert.ok(isWorkerMessage(message) && message.type === 'flotilla:metrics', 'the families pass the guard');
    return message.metrics;
  });
  return text(mergeFamilies(received, new Set()));
}

const text = (blocks: string[]) => `${blocks.join('\n\n')}\n`;
const promClient = (lists: readonly MetricJson[][]) => AggregatorRegistry.aggregate(lists as MetricJson[][]).metrics();

interface Definition {
  type: Type;
  help: string;
  labelNames: string[];
  aggregator: Aggregator;
  buckets: number[];
}
interface Operation {
  metric: number;
  values: (string | number)[];
  /** A rotation of the label names: the first call for a label set fixes its key order in that process. */
  rotate: number;
  value: number;
}
interface Process {
  registered: boolean[];
  operations: Operation[];
  /** Other buckets for the histograms of this process. */
  otherBuckets: boolean;
  /** Histograms in histogram form (or sample by sample). */
  histograms: boolean;
}

const VALUE_CHARS = fc.constantFrom('x', 'y', '"', '\\', '\n', 'é', '→', ' ', '{', '}', '=', 'n');
const definition: fc.Arbitrary<Definition> = fc.record({
  type: fc.constantFrom<Type>('counter', 'gauge', 'histogram', 'summary'),
  help: fc.string({ unit: VALUE_CHARS, minLength: 1, maxLength: 6 }),
  labelNames: fc.uniqueArray(fc.constantFrom('a', 'b', 'code', 'le', 'zone'), { maxLength: 3 }),
  aggregator: fc.constantFrom<Aggregator>('sum', 'first', 'min', 'max', 'average', 'omit'),
  buckets: fc
    .uniqueArray(fc.integer({ min: -8, max: 40 }), { minLength: 1, maxLength: 4 })
    .map((b) => b.sort((x, y) => x - y).map((n) => n / 4)),
});
const gaugeValue = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0.1, 0.2),
);
const operation: fc.Arbitrary<Operation> = fc.record({
  metric: fc.nat(),
  // mostly a few values, so that processes share label sets
  values: fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom<string | number>('x', 'y"', 'a\\b', 'n\nl', 0, 1) },
      { weight: 1, arbitrary: fc.string({ unit: VALUE_CHARS, maxLength: 3 }) },
    ),
    { minLength: 3, maxLength: 3 },
  ),
  rotate: fc.nat(2),
  value: gaugeValue,
});
const processes = fc.array(
  fc.record({
    registered: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    operations: fc.array(operation, { maxLength: 25 }),
    otherBuckets: fc.boolean(),
    histograms: fc.boolean(),
  }),
  { minLength: 1, maxLength: 4 },
);

/** A registry as one process of the cluster would have it: the metrics it registered, after its operations. */
function registryOf(definitions: readonly Definition[], process: Process): Registry {
  const registry = new Registry();
  const metrics = definitions.map((d, i) => {
    if (process.registered[i] === false) return undefined;
    const name = `m${i}_x`;
    const labelNames = d.type === 'histogram' ? d.labelNames.filter((l) => l !== 'le') : d.labelNames;
    const common = { name, help: d.help, labelNames, aggregator: d.aggregator, registers: [registry] };
    if (d.type === 'counter') return new Counter(common);
    if (d.type === 'gauge') return new Gauge(common);
    if (d.type === 'summary') return new Summary({ ...common, percentiles: [0.5, 0.9] });
    return new Histogram({ ...common, buckets: process.otherBuckets ? d.buckets.map((b) => b + 0.5) : d.buckets });
  });
  for (const op of process.operations) {
    const index = op.metric % definitions.length;
    const metric = metrics[index];
    if (metric === undefined) continue;
    const names = (metric as unknown as { labelNames: string[] }).labelNames;
    const rotated = [...names.slice(op.rotate % Math.max(1, names.length)), ...names.slice(0, op.rotate % Math.max(1, names.length))];
    const labels = Object.fromEntries(rotated.map((n) => [n, op.values[names.indexOf(n)] ?? 'v']));
    const finite = Number.isFinite(op.value) ? Math.abs(op.value) : 1;
    if (metric instanceof Counter) metric.inc(labels, finite);
    else if (metric instanceof Gauge) metric.set(labels, op.value);
    else metric.observe(labels, finite);
  }
  return registry;
}

test('property: the merged text is exactly what prom-client aggregates from the same processes', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(definition, { minLength: 1, maxLength: 6 }), processes, async (definitions, procs) => {
      const lists = await Promise.all(procs.map((p) => registryOf(definitions, p).getMetricsAsJSON()));
      assert.equal(
        viaIpc(
          lists,
          procs.map((p) => p.histograms),
        ),
        await promClient(lists),
      );
    }),
    { numRuns: 1000 },
  );
});

test('property: merged families, merged again on their own, render the same text', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(definition, { minLength: 1, maxLength: 6 }), processes, async (definitions, procs) => {
      const lists = await Promise.all(procs.map((p) => registryOf(definitions, p).getMetricsAsJSON()));
      const merger = new FamilyMerger();
      lists.forEach((list, i) => {
        merger.add(toMetricFamilies(list, { histograms: procs[i]?.histograms ?? true }));
      });
      const families = merger.families();
      assert.equal(text(new FamilyMerger().add(families).render()), text(merger.render()));
      assert.ok(
        families.every((f) => f.aggregator !== 'omit'),
        'omitted families are left out',
      );
    }),
    { numRuns: 300 },
  );
});

test("a worker's real registry (request metrics, process metrics) merges as prom-client aggregates it", async () => {
  const lists: MetricJson[][] = [];
  for (const status of [200, 404]) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const collector = new PromMetricsCollector(registry);
    for (let i = 0; i < 30; i++)
      collector.recordRequest({ method: 'GET', route: `/r${i % 7}`, status: i % 3 === 0 ? status : 200, durationMs: i });
    lists.push(await registry.getMetricsAsJSON());
  }
  const expected = await promClient(lists);
  assert.equal(viaIpc(lists), expected);
  assert.equal(viaIpc(lists, [false, true]), expected, 'a histogram sent sample by sample merges with one sent as a histogram');
  assert.match(expected, /^http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/r0",status="200"\} 1$/m);
  assert.match(expected, /^nodejs_version_info\{version="v[^"]+",major="\d+",minor="\d+",patch="\d+"\} 1$/m);
});

test('histograms travel once per label set, not once per bucket', async () => {
  const registry = new Registry();
  const collector = new PromMetricsCollector(registry);
  for (let i = 0; i < 50; i++) collector.recordRequest({ method: 'GET', route: `/m${i}`, status: 200, durationMs: 3 });
  const [, histogram] = toMetricFamilies(await registry.getMetricsAsJSON()) as [MetricFamily, MetricFamily];
  assert.equal(histogram.series.length, 50);
  assert.equal(histogram.series[0], 'method="GET",route="/m0",status="200"');
  assert.deepEqual(histogram.buckets, ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
  assert.equal(histogram.values.length, 50 * 14);
});

test('label sets match whatever the order of their labels, and print as the first process wrote them', async () => {
  const processes = [
    { route: '/a', method: 'GET' },
    { method: 'GET', route: '/a' },
  ].map((labels) => {
    const registry = new Registry();
    new Counter({ name: 'c_total', help: 'c', labelNames: ['method', 'route'], registers: [registry] }).inc(labels);
    new Histogram({ name: 'h', help: 'h', labelNames: ['method', 'route'], buckets: [1], registers: [registry] }).observe(labels, 0.5);
    return registry.getMetricsAsJSON();
  });
  const lists = await Promise.all(processes);
  const merged = viaIpc(lists);
  assert.equal(merged, await promClient(lists));
  assert.equal(viaIpc(lists, [true, false]), merged, 'also when the second process sends its histogram sample by sample');
  assert.match(merged, /^c_total\{route="\/a",method="GET"\} 2$/m);
  assert.match(merged, /^h_bucket\{le="1",route="\/a",method="GET"\} 2$/m);
});

test('families named in exclude are left out; omit leaves a family out', () => {
  const family = (name: string, aggregator: MetricFamily['aggregator']): MetricFamily => ({
    name,
    help: 'h',
    type: 'gauge',
    aggregator,
    series: [name],
    values: [1],
  });
  const blocks = mergeFamilies([[family('a', 'sum'), family('b', 'sum'), family('c', 'omit')], [family('a', 'sum')]], new Set(['b']));
  assert.deepEqual(blocks, ['# HELP a h\n# TYPE a gauge\na 2']);
});

test('an unknown aggregator fails the merge as it fails prom-client', () => {
  const family = { name: 'a', help: 'h', type: 'gauge', aggregator: 'median', series: ['a'], values: [1] } as unknown as MetricFamily;
  assert.throws(() => mergeFamilies([[family]], new Set()), /'median' is not a defined aggregator/);
});
