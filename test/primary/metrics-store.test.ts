import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
  Summary,
} from 'prom-client';
import type { MetricFamily } from '../../src/ipc/metric-family.ts';
import { toMetricFamilies } from '../../src/metrics/metric-families.ts';
import { PromMetricsCollector } from '../../src/metrics/prom-collector.ts';
import { mergeFamilies } from '../../src/primary/merge-families.ts';
import { MetricsStore } from '../../src/primary/metrics-store.ts';

type MetricJson = MetricObjectWithValues<MetricValue<string>>;

const text = (blocks: string[]) => `${blocks.join('\n\n')}\n`;
const NONE = new Set<string>();

/** Every sample of an exposition, by name and label set (labels sorted, so that label order does not matter), with its family's type. */
function parse(exposition: string): Map<string, { value: number; type: string; family: string }> {
  const samples = new Map<string, { value: number; type: string; family: string }>();
  const types = new Map<string, string>();
  let family = '';
  for (const line of exposition.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) {
      family = type[1] as string;
      types.set(family, type[2] as string);
      continue;
    }
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const sample = line.slice(0, space);
    const brace = sample.indexOf('{');
    const name = brace === -1 ? sample : sample.slice(0, brace);
    const labels = brace === -1 ? [] : [...sample.slice(brace + 1, -1).matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((m) => m[0]);
    const key = `${name}{${labels.sort().join(',')}}`;
    assert.ok(!samples.has(key), `${key} appears once`);
    const raw = line.slice(space + 1);
    const value =
      raw === 'Nan' ? Number.NaN : raw === '+Inf' ? Number.POSITIVE_INFINITY : raw === '-Inf' ? Number.NEGATIVE_INFINITY : Number(raw);
    samples.set(key, { value, type: types.get(family) ?? '?', family });
  }
  return samples;
}

const value = (exposition: string, key: string) => parse(exposition).get(key)?.value;

function family(
  name: string,
  type: MetricFamily['type'],
  series: string[],
  values: number[],
  more: Partial<MetricFamily> = {},
): MetricFamily {
  return { name, help: `${name} help`, type, aggregator: 'sum', series, values, ...more };
}

/** One process's families: a counter, a histogram (histogram form), a gauge, a summary, by status code. */
function snapshot(counts: Record<string, number>, gauge = 1): MetricFamily[] {
  const codes = Object.keys(counts);
  return [
    family(
      'requests_total',
      'counter',
      codes.map((c) => `requests_total{code="${c}"}`),
      codes.map((c) => counts[c] as number),
    ),
    family(
      'latency_seconds',
      'histogram',
      codes.map((c) => `code="${c}"`),
      codes.flatMap((c) => {
        const n = counts[c] as number;
        return [n, n, n * 0.25, n];
      }),
      { buckets: ['0.5', '+Inf'] },
    ),
    family('in_flight', 'gauge', ['in_flight'], [gauge]),
    family(
      'work_seconds',
      'summary',
      ['work_seconds{quantile="0.5"}', 'work_seconds_sum', 'work_seconds_count'],
      [0.1, 0.5 * (counts['200'] ?? 0), counts['200'] ?? 0],
    ),
  ];
}

test('gauges are dropped on retire, counters and histograms kept per label set, summaries keep _sum and _count', () => {
  const store = new MetricsStore();
  store.update('a', snapshot({ 200: 4, 500: 1 }, 7));
  store.update('b', snapshot({ 200: 2 }, 3));
  let out = text(store.render(NONE));
  assert.equal(value(out, 'in_flight{}'), 10);
  assert.equal(value(out, 'requests_total{code="200"}'), 6);
  assert.equal(value(out, 'work_seconds{quantile="0.5"}'), 0.2, 'live quantiles sum, as prom-client sums them');

  store.retire('a');
  out = text(store.render(NONE));
  assert.equal(value(out, 'in_flight{}'), 3, "the retired process's gauge is gone");
  assert.equal(value(out, 'requests_total{code="200"}'), 6);
  assert.equal(value(out, 'requests_total{code="500"}'), 1, 'a label set only the retired process had stays');
  assert.equal(value(out, 'latency_seconds_bucket{code="500",le="0.5"}'), 1);
  assert.equal(value(out, 'latency_seconds_sum{code="500"}'), 0.25);
  assert.equal(value(out, 'latency_seconds_count{code="200"}'), 6);
  assert.equal(value(out, 'work_seconds_sum{}'), 3);
  assert.equal(value(out, 'work_seconds_count{}'), 6);
  assert.equal(value(out, 'work_seconds{quantile="0.5"}'), 0.1, "the retired process's quantile is gone");

  store.retire('b');
  out = text(store.render(NONE));
  assert.doesNotMatch(out, /in_flight/, 'no live process: the gauge is gone');
  assert.equal(value(out, 'requests_total{code="200"}'), 6);
  assert.equal(value(out, 'work_seconds_count{}'), 6);
  assert.doesNotMatch(out, /quantile/);
});

test('a new process with the same label sets adds on top of the retired totals', () => {
  const store = new MetricsStore();
  store.update('1', snapshot({ 200: 10 }));
  store.retire('1');
  store.update('2', snapshot({ 200: 0 }));
  let out = text(store.render(NONE));
  assert.equal(value(out, 'requests_total{code="200"}'), 10, 'the new process starts at 0: the sum does not drop');
  store.update('2', snapshot({ 200: 3, 404: 1 }));
  out = text(store.render(NONE));
  assert.equal(value(out, 'requests_total{code="200"}'), 13);
  assert.equal(value(out, 'requests_total{code="404"}'), 1);
  assert.equal(value(out, 'latency_seconds_count{code="200"}'), 13);
  store.retire('2');
  store.retire('2');
  assert.equal(value(text(store.render(NONE)), 'requests_total{code="200"}'), 13, 'a second retire of the same key changes nothing');
});

test('a float total does not drop by a rounding error when a retire changes the order of the terms', () => {
  // live A, B, C: (0.1 + 0.1) + 0.6 = 0.8; B retired: (0.1 + 0.6) + 0.1 = 0.7999999999999999, a "reset" to Prometheus
  assert.equal(0.1 + 0.6 + 0.1, 0.7999999999999999);
  const store = new MetricsStore();
  const cpu = (v: number) => [family('cpu_seconds_total', 'counter', ['cpu_seconds_total'], [v])];
  store.update('a', cpu(0.1));
  store.update('b', cpu(0.1));
  store.update('c', cpu(0.6));
  assert.equal(value(text(store.render(NONE)), 'cpu_seconds_total{}'), 0.8);
  store.retire('b');
  assert.equal(value(text(store.render(NONE)), 'cpu_seconds_total{}'), 0.8);
  store.retire('a');
  store.retire('c');
  assert.ok((value(text(store.render(NONE)), 'cpu_seconds_total{}') as number) >= 0.8);
});

test('a snapshot arriving after its process was retired is ignored (it would count the process twice), until the key joins again', () => {
  const store = new MetricsStore();
  store.update('7', snapshot({ 200: 5 }));
  store.retire('7');
  assert.equal(store.update('7', snapshot({ 200: 6 })), false);
  assert.equal(store.live, 0);
  assert.equal(value(text(store.render(NONE)), 'requests_total{code="200"}'), 5);
  store.join('7');
  assert.deepEqual([store.live, store.missing], [1, 1], 'a new process under the same key (a restarted service thread)');
  assert.equal(store.update('7', snapshot({ 200: 1 })), true);
  assert.equal(value(text(store.render(NONE)), 'requests_total{code="200"}'), 6);
});

test('stale and missing: live processes with an old snapshot, and with none yet', () => {
  let now = 1000;
  const store = new MetricsStore({ now: () => now });
  store.join('a');
  store.join('b');
  store.join('service');
  assert.deepEqual([store.live, store.missing, store.stale(now, 3000)], [3, 3, 0]);
  store.update('a', snapshot({ 200: 1 }));
  now = 2000;
  store.update('b', snapshot({ 200: 1 }));
  assert.deepEqual([store.missing, store.stale(now, 3000)], [1, 0]);
  assert.equal(store.age('a', now), 1000);
  assert.equal(store.age('service', now), undefined, 'no snapshot, no age');
  assert.equal(store.stale(4001, 3000), 1, 'a is older than 3 s; b is not');
  assert.equal(store.stale(5001, 3000), 2);
  assert.equal(value(text(store.render(NONE)), 'requests_total{code="200"}'), 2, 'stale processes still count');
  store.update('a', snapshot({ 200: 1 }), 5000);
  assert.equal(store.stale(5001, 3000), 1, 'an explicit time');
  store.retire('service');
  store.retire('b');
  assert.deepEqual([store.live, store.missing, store.stale(5001, 3000)], [1, 0, 0]);
});

test('families not summed are not carried over; omit stays omitted; exclude leaves families out', () => {
  const store = new MetricsStore();
  const odd = (v: number): MetricFamily[] => [
    family('peak_total', 'counter', ['peak_total'], [v], { aggregator: 'max' }),
    family('version_info', 'gauge', ['version_info{v="1"}'], [1], { aggregator: 'first' }),
    family('start_time_seconds', 'gauge', ['start_time_seconds'], [v], { aggregator: 'omit' }),
    family('kept_total', 'counter', ['kept_total'], [v]),
  ];
  store.update('a', odd(9));
  store.update('b', odd(4));
  let out = text(store.render(NONE));
  assert.equal(value(out, 'peak_total{}'), 9);
  assert.doesNotMatch(out, /start_time_seconds/);
  store.retire('a');
  out = text(store.render(NONE));
  assert.equal(value(out, 'peak_total{}'), 4, 'a max over live processes: the retired one no longer counts');
  assert.equal(value(out, 'version_info{v="1"}'), 1);
  assert.equal(value(out, 'kept_total{}'), 13);
  assert.doesNotMatch(out, /start_time_seconds/);
  store.retire('b');
  out = text(store.render(new Set(['kept_total'])));
  assert.doesNotMatch(out, /peak_total|version_info|kept_total/);
  assert.equal(value(text(store.render(NONE)), 'kept_total{}'), 13);
});

test('with nothing retired, the render is byte for byte what prom-client aggregates', async () => {
  const lists: MetricJson[][] = [];
  for (const status of [200, 404]) {
    const registry = new Registry();
    const collector = new PromMetricsCollector(registry);
    for (let i = 0; i < 30; i++)
      collector.recordRequest({ method: 'GET', route: `/r${i % 7}`, status: i % 3 === 0 ? status : 200, durationMs: i });
    new Summary({ name: 's_seconds', help: 's', registers: [registry] }).observe(status / 1000);
    lists.push(await registry.getMetricsAsJSON());
  }
  const store = new MetricsStore();
  store.join('none-yet');
  lists.forEach((list, i) => {
    store.update(String(i), toMetricFamilies(list));
  });
  const expected = await AggregatorRegistry.aggregate(lists).metrics();
  assert.equal(text(store.render(NONE)), expected);
  assert.equal(
    text(store.render(NONE)),
    text(
      mergeFamilies(
        lists.map((l) => toMetricFamilies(l)),
        NONE,
      ),
    ),
  );
});

test('label sets match across processes and retirements whatever their label order', () => {
  const store = new MetricsStore();
  store.update('a', [family('c_total', 'counter', ['c_total{b="1",a="2"}'], [5], { keys: ['c_total{a="2",b="1"}'] })]);
  store.retire('a');
  store.update('b', [family('c_total', 'counter', ['c_total{a="2",b="1"}'], [1])]);
  assert.equal(text(store.render(NONE)), '# HELP c_total c_total help\n# TYPE c_total counter\nc_total{a="2",b="1"} 6\n');
});

// ---------------------------------------------------------------------------------------------------------------
// Property: counters, histogram buckets/sums/counts and summary sums/counts never decrease from render to render.

interface ProcessShape {
  /** Histograms sent sample by sample rather than in histogram form. */
  sampleForm: boolean;
  /** Other bucket bounds (a deploy that changed them). */
  otherBuckets: boolean;
  /** Label names given in the other order on first use. */
  reversed: boolean;
}
type Command =
  | { kind: 'spawn'; shape: ProcessShape }
  | { kind: 'work'; process: number; ops: { metric: number; code: number; amount: number }[]; push: boolean }
  | { kind: 'retire'; process: number }
  | { kind: 'late'; process: number }
  | { kind: 'render' };

const CODES = ['200', '404', '500'];
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('spawn' as const),
      shape: fc.record({ sampleForm: fc.boolean(), otherBuckets: fc.boolean(), reversed: fc.boolean() }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('work' as const),
      process: fc.nat(),
      ops: fc.array(
        fc.record({
          metric: fc.oneof(
            { weight: 2, arbitrary: fc.constant(0) },
            { weight: 4, arbitrary: fc.constantFrom(1, 2) },
            { weight: 2, arbitrary: fc.constantFrom(3, 4, 5) },
          ),
          code: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(CODES.length - 1) }),
          // fractional amounts: float sums whose rounding depends on the order of the terms
          amount: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.double({ min: 1e-6, max: 1e4, noNaN: true })),
        }),
        { minLength: 1, maxLength: 12 },
      ),
      push: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retire' as const), process: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('late' as const), process: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('render' as const) }) },
);

interface Proc {
  key: string;
  shape: ProcessShape;
  registry: Registry;
  inc: (metric: number, code: string, amount: number) => void;
  /** The integer counter as last pushed, by code. */
  pushed: Map<string, number>;
  counted: Map<string, number>;
  last: MetricFamily[] | undefined;
}

function spawn(key: string, shape: ProcessShape): Proc {
  const registry = new Registry();
  const labelNames = shape.reversed ? ['method', 'code'] : ['code', 'method'];
  const registers = [registry];
  const counter = new Counter({ name: 'count_total', help: 'integer counts', labelNames, registers });
  const float = new Counter({ name: 'cpu_seconds_total', help: 'fractional counts', labelNames, registers });
  const histogram = new Histogram({
    name: 'dur_seconds',
    help: 'durations',
    labelNames,
    buckets: shape.otherBuckets ? [0.5, 50, 5000] : [1, 100],
    registers,
  });
  const summary = new Summary({ name: 'sz_bytes', help: 'sizes', labelNames, percentiles: [0.5], registers });
  const gauge = new Gauge({ name: 'level', help: 'a gauge', labelNames, registers });
  const peak = new Counter({ name: 'peak_total', help: 'max-aggregated', labelNames, aggregator: 'max', registers });
  const counted = new Map<string, number>();
  return {
    key,
    shape,
    registry,
    pushed: new Map(),
    counted,
    last: undefined,
    inc(metric, code, amount) {
      const labels = shape.reversed ? { method: 'GET', code } : { code, method: 'GET' };
      if (metric === 0) {
        const n = Math.ceil(amount);
        counter.inc(labels, n);
        counted.set(code, (counted.get(code) ?? 0) + n);
      } else if (metric === 1) float.inc(labels, amount);
      else if (metric === 2) histogram.observe(labels, amount);
      else if (metric === 3) summary.observe(labels, amount);
      else if (metric === 4) gauge.set(labels, amount);
      else peak.inc(labels, amount);
    },
  };
}

/** A sample whose value must never decrease: counters, histograms, summaries' _sum and _count; not max-aggregated ones. */
function isMonotone(key: string, sample: { type: string; family: string }): boolean {
  if (sample.family === 'peak_total') return false;
  if (sample.type === 'counter' || sample.type === 'histogram') return true;
  return sample.type === 'summary' && !key.includes('quantile=');
}

test('property: counters and histograms never decrease from one render to the next, and counts are exact', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 60 }), async (commands) => {
      const store = new MetricsStore();
      const live: Proc[] = [];
      const dead: Proc[] = [];
      let spawned = 0;
      let previous = new Map<string, { value: number; type: string; family: string }>();
      const check = () => {
        const out = text(store.render(NONE));
        const current = parse(out);
        for (const [key, before] of previous) {
          if (!isMonotone(key, before)) continue;
          const after = current.get(key);
          assert.ok(after !== undefined, `${key} vanished:\n${out}`);
          assert.ok(after.value >= before.value, `${key} went from ${before.value} down to ${after.value}`);
        }
        // the integer counter is exactly the sum of what every process, live or gone, last pushed
        const expected = new Map<string, number>();
        for (const p of [...live, ...dead]) for (const [code, n] of p.pushed) expected.set(code, (expected.get(code) ?? 0) + n);
        for (const code of CODES) {
          assert.equal(current.get(`count_total{code="${code}",method="GET"}`)?.value, expected.get(code), `count_total for ${code}`);
        }
        previous = current;
      };
      for (const c of commands) {
        if (c.kind === 'spawn') {
          const p = spawn(`w${spawned++}`, c.shape);
          live.push(p);
          store.join(p.key);
        } else if (c.kind === 'render') check();
        else if (c.kind === 'late') {
          const p = dead[c.process % Math.max(1, dead.length)];
          if (p?.last !== undefined) assert.equal(store.update(p.key, p.last), false);
        } else {
          const i = c.process % Math.max(1, live.length);
          const p = live[i];
          if (p === undefined) continue;
          if (c.kind === 'retire') {
            live.splice(i, 1);
            dead.push(p);
            store.retire(p.key);
            continue;
          }
          for (const op of c.ops) p.inc(op.metric, CODES[op.code] as string, op.amount);
          if (c.push) {
            p.last = toMetricFamilies(await p.registry.getMetricsAsJSON(), { histograms: !p.shape.sampleForm });
            p.pushed = new Map(p.counted);
            store.update(p.key, p.last);
          }
        }
      }
      check();
    }),
    { numRuns: 1000 },
  );
});
