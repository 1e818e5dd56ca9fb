import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client';
import type { RequestMetric } from '../../src/metrics/metrics-collector.ts';
import { HTTP_DURATION_BUCKETS, PromMetricsCollector } from '../../src/metrics/prom-collector.ts';

/** What PromMetricsCollector did before its store: prom-client's Counter and Histogram, reused when registered. */
class PromClientCollector {
  readonly #requests: Counter<string>;
  readonly #duration: Histogram<string>;

  constructor(registry: Registry, buckets: readonly number[] = HTTP_DURATION_BUCKETS) {
    const labelNames = ['method', 'route', 'status'];
    const requests = registry.getSingleMetric('http_requests_total') as Counter<string> | undefined;
    const duration = registry.getSingleMetric('http_request_duration_seconds') as Histogram<string> | undefined;
    const registers = [registry];
    this.#requests = requests ?? new Counter({ name: 'http_requests_total', help: 'HTTP requests handled.', labelNames, registers });
    this.#duration =
      duration ??
      new Histogram({
        name: 'http_request_duration_seconds',
        help: 'Time to handle an HTTP request, in seconds.',
        labelNames,
        buckets: [...buckets],
        registers,
      });
  }

  recordRequest(m: RequestMetric): void {
    const labels = { method: m.method, route: m.route, status: String(m.status) };
    this.#requests.inc(labels);
    this.#duration.observe(labels, m.durationMs > 0 && m.durationMs < Number.POSITIVE_INFINITY ? m.durationMs / 1000 : 0);
  }
}

const NAMES = ['http_requests_total', 'http_request_duration_seconds'] as const;

type Step =
  | { kind: 'request'; collector: number; series: number; durationMs: number | { bound: number } }
  | { kind: 'read' }
  | { kind: 'reset' }
  | { kind: 'reset-one' | 'replace'; metric: 0 | 1 }
  | { kind: 'default-labels'; labels: Record<string, string> };

const chars = (...units: string[]) => fc.string({ unit: fc.constantFrom(...units), maxLength: 8 });
const method = fc.oneof(fc.constantFrom('GET', 'POST', 'DELETE', 'PROPFIND', 'BREW'), chars('G', 'E', 'T', '-', '!', '~'));
const route = fc.oneof(
  fc.constantFrom('/', '', '/books/:id', 'unmatched', '/q"uote', '/back\\slash', '/new\nline', '/\\"\n\\n'),
  chars('/', 'a', ':', ',', '"', '\\', '\n', 'n', 'é', '→', ' ', '{', '}', '='),
);
const status = fc.oneof(fc.constantFrom(200, 201, 304, 404, 500), fc.integer({ min: 0, max: 999 }));
const buckets = fc.oneof(
  fc.constant(undefined),
  fc.uniqueArray(fc.double({ min: 0, max: 20, noNaN: true }), { maxLength: 6 }).map((b) => b.sort((x, y) => x - y)),
  // Unsorted, repeated, -0 beside 0, -1, NaN, Infinity: prom-client takes them as they come.
  fc.array(fc.oneof(fc.constantFrom(-1, 0, -0, 0.005, 0.5, 1, Number.POSITIVE_INFINITY, Number.NaN), fc.double()), { maxLength: 6 }),
);
const duration = fc.oneof(
  fc.constantFrom(0, -0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 5, 10, 250, 1_000, 10_000),
  fc.double({ min: 0, max: 20_000, noNaN: true }),
  fc.double(),
  fc.record({ bound: fc.nat() }),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('request'), collector: fc.nat(), series: fc.nat(), durationMs: duration }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('reset-one', 'replace'), metric: fc.constantFrom(0, 1) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('default-labels'),
      labels: fc.dictionary(fc.constantFrom('env', 'route', 'status', 'le', 'zone'), route, { maxKeys: 2 }),
    }),
  },
);

/** Both registries read the same: text byte for byte, JSON deeply (and as it crosses IPC). */
async function assertSame(subject: Registry, reference: Registry): Promise<void> {
  assert.equal(await subject.metrics(), await reference.metrics());
  const [json, expected] = [await subject.getMetricsAsJSON(), await reference.getMetricsAsJSON()];
  assert.deepStrictEqual(json, expected);
  assert.equal(JSON.stringify(json), JSON.stringify(expected));
}

test('the registry reads exactly as with prom-client Counter and Histogram, whatever the requests, resets and reuses', async () => {
  await fc.assert(
    fc.asyncProperty(
      buckets,
      fc.array(fc.record({ method, route, status }), { minLength: 1, maxLength: 6 }),
      fc.array(step, { maxLength: 60 }),
      fc.boolean(),
      async (bounds, series, steps, openMetrics) => {
        const [subject, reference] = [new Registry(), new Registry()];
        // OpenMetrics: the Registry renames counters (`metric.name` without `_total`) as it writes them.
        if (openMetrics)
          for (const r of [subject, reference]) (r as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
        const options = bounds === undefined ? {} : { buckets: bounds };
        const collectors = [new PromMetricsCollector(subject, options), new PromMetricsCollector(subject, { buckets: [7] })];
        const references = [new PromClientCollector(reference, bounds), new PromClientCollector(reference, [7])];
        const all = bounds ?? HTTP_DURATION_BUCKETS;
        for (const s of steps) {
          if (s.kind === 'request') {
            const { durationMs } = s;
            const ms = typeof durationMs === 'number' ? durationMs : (all[durationMs.bound % Math.max(all.length, 1)] ?? 0) * 1000;
            const m = { ...(series[s.series % series.length] as (typeof series)[number]), durationMs: ms };
            collectors[s.collector % collectors.length]?.recordRequest(m);
            references[s.collector % references.length]?.recordRequest(m);
          } else if (s.kind === 'read') await assertSame(subject, reference);
          else if (s.kind === 'reset') for (const r of [subject, reference]) r.resetMetrics();
          else if (s.kind === 'reset-one') for (const r of [subject, reference]) r.getSingleMetric(NAMES[s.metric])?.reset();
          else if (s.kind === 'default-labels') for (const r of [subject, reference]) r.setDefaultLabels(s.labels);
          else {
            // One metric taken off the registry, then a new collector: it registers a new one beside the other's.
            for (const r of [subject, reference]) r.removeSingleMetric(NAMES[s.metric]);
            collectors.push(new PromMetricsCollector(subject, options));
            references.push(new PromClientCollector(reference, bounds));
          }
        }
        await assertSame(subject, reference);
      },
    ),
    {
      numRuns: 300,
      examples: [
        // The registry writes default labels into the counter's samples; a counter reset starts afresh.
        [
          undefined,
          [{ method: 'GET', route: '', status: 200 }],
          [
            { kind: 'default-labels', labels: { env: 'x', route: 'r' } },
            { kind: 'request', collector: 0, series: 0, durationMs: 1 },
            { kind: 'read' },
            { kind: 'reset-one', metric: 0 },
            { kind: 'default-labels', labels: {} },
            { kind: 'request', collector: 1, series: 0, durationMs: 1 },
          ],
          false,
        ],
      ],
    },
  );
});
