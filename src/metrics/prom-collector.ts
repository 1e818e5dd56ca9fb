import type { Metric, Registry } from 'prom-client';
import type { MetricsCollector, RequestMetric } from './metrics-collector.ts';
import { registeredCounter, registeredHistogram } from './registered-metric.ts';
import { RequestCounterView, RequestHistogramView } from './request-metric-views.ts';
import { RequestMetricsStore } from './request-metrics-store.ts';

/**
 * Buckets of `http_request_duration_seconds`, in seconds: 5 ms to 10 s.
 *
 * @example
 * new PromMetricsCollector(registry, { buckets: [...HTTP_DURATION_BUCKETS, 30] });
 */
export const HTTP_DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Options of a {@link PromMetricsCollector}.
 *
 * @example
 * new PromMetricsCollector(registry, { buckets: [0.01, 0.1, 1] });
 */
export interface PromMetricsCollectorOptions {
  /** Buckets of the duration histogram, in seconds. Default {@link HTTP_DURATION_BUCKETS}. */
  buckets?: readonly number[];
}

const REQUESTS = { name: 'http_requests_total', help: 'HTTP requests handled.' };
const DURATION = { name: 'http_request_duration_seconds', help: 'Time to handle an HTTP request, in seconds.' };
const LABEL_NAMES: ('method' | 'route' | 'status')[] = ['method', 'route', 'status'];

/** How a request is recorded when the two metrics are not one store's (see {@link fallback}). */
type Recorder = (m: RequestMetric, seconds: number) => void;

/**
 * The default {@link MetricsCollector}: `http_requests_total` (counter) and
 * `http_request_duration_seconds` (histogram), both labelled
 * `{method, route, status}` with `route` the route template, on a prom-client
 * registry. They are kept in a `RequestMetricsStore` (`request-metrics-store.ts`) registered on the
 * registry (per request three Map lookups, no allocation once the series exists, where prom-client
 * hashes a label object per `inc` and `observe`); the registry's text and JSON
 * are exactly those of a prom-client Counter and Histogram fed the same requests.
 *
 * Metrics already registered under those names on `registry` are reused: those
 * of another collector over the same registry, or a prom-client Counter and
 * Histogram with those labels (fed through prom-client, as before); anything
 * else under those names is refused (`FLO_ERR_METRIC_CONFLICT`).
 *
 * @example
 * const registry = new Registry();
 * app.setMetricsCollector(new PromMetricsCollector(registry));
 * // GET /books/42 → http_requests_total{method="GET",route="/books/:id",status="200"} 1
 */
export class PromMetricsCollector implements MetricsCollector {
  readonly registry: Registry;
  readonly #store: RequestMetricsStore | undefined;
  readonly #fallback: Recorder | undefined;

  constructor(registry: Registry, options: PromMetricsCollectorOptions = {}) {
    this.registry = registry;
    const counter = registry.getSingleMetric(REQUESTS.name);
    const histogram = registry.getSingleMetric(DURATION.name);
    if (counter === undefined && histogram === undefined) {
      const store = new RequestMetricsStore(options.buckets ?? HTTP_DURATION_BUCKETS);
      // The Registry only calls `get()`, `getForPromString()` and `reset()`, and reads `name` and `type`.
      registry.registerMetric(new RequestCounterView(store, REQUESTS.name, REQUESTS.help) as unknown as Metric);
      registry.registerMetric(new RequestHistogramView(store, DURATION.name, DURATION.help) as unknown as Metric);
      this.#store = store;
    } else if (counter instanceof RequestCounterView && histogram instanceof RequestHistogramView && counter.store === histogram.store) {
      this.#store = counter.store;
    } else {
      this.#fallback = fallback(registry, counter, histogram, options);
    }
  }

  recordRequest(m: RequestMetric): void {
    // prom-client throws on non-finite values; a collector must never throw.
    const seconds = m.durationMs > 0 && m.durationMs < Number.POSITIVE_INFINITY ? m.durationMs / 1000 : 0;
    if (this.#store !== undefined) this.#store.record(m.method, m.route, m.status, seconds);
    else this.#fallback?.(m, seconds);
  }
}

/**
 * Each metric on its own when the registry does not hold one store's pair:
 * a prom-client metric registered under the name (or a new one) through
 * prom-client, a store's half (the other half removed from the registry) through
 * its store.
 */
function fallback(registry: Registry, counter: unknown, histogram: unknown, options: PromMetricsCollectorOptions): Recorder {
  let count: (m: RequestMetric) => void;
  if (counter instanceof RequestCounterView) {
    const { store } = counter;
    count = (m) => store.count(m.method, m.route, m.status);
  } else {
    const prom = registeredCounter(registry, { ...REQUESTS, labelNames: LABEL_NAMES });
    count = (m) => prom.inc(labelsOf(m));
  }
  let observe: Recorder;
  if (histogram instanceof RequestHistogramView) {
    const { store } = histogram;
    observe = (m, seconds) => store.observe(m.method, m.route, m.status, seconds);
  } else {
    const buckets = [...(options.buckets ?? HTTP_DURATION_BUCKETS)];
    const prom = registeredHistogram(registry, { ...DURATION, labelNames: LABEL_NAMES, buckets });
    observe = (m, seconds) => prom.observe(labelsOf(m), seconds);
  }
  return (m, seconds) => {
    count(m);
    observe(m, seconds);
  };
}

function labelsOf(m: RequestMetric): Record<'method' | 'route' | 'status', string> {
  return { method: m.method, route: m.route, status: String(m.status) };
}
