import type { CounterSample, RequestLabels, RequestMetricsStore } from './request-metrics-store.ts';

/** The label names of both request metrics. */
const REQUEST_LABEL_NAMES: readonly string[] = Object.freeze(['method', 'route', 'status']);

/** A histogram sample as prom-client's `Histogram.get()` gives it (`labels` last, `le` first in them). */
interface HistogramSample {
  value: number;
  metricName: string;
  exemplar: null | undefined;
  labels: Record<string, string | number>;
}

/** A histogram sample as `Histogram.getForPromString()` gives it, the series' labels apart. */
interface HistogramTextSample {
  labels: Record<string, string | number>;
  sharedLabels: RequestLabels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

interface Family<T> {
  name: string;
  help: string;
  type: string;
  values: T[];
  aggregator: string;
}

/**
 * `http_requests_total` as registered on a prom-client Registry: the counter of
 * a {@link RequestMetricsStore}, with what the Registry uses of a metric
 * (`name`, `help`, `type`, `get()`, `reset()`) and gives back exactly what a
 * prom-client Counter would: `get()` hands out the stored `{ value, labels }`
 * samples themselves, in first-seen order.
 *
 * @example
 * registry.registerMetric(new RequestCounterView(store, 'http_requests_total', 'HTTP requests handled.') as never);
 */
export class RequestCounterView {
  name: string;
  help: string;
  readonly type = 'counter';
  aggregator = 'sum';
  readonly labelNames = REQUEST_LABEL_NAMES;
  readonly store: RequestMetricsStore;

  constructor(store: RequestMetricsStore, name: string, help: string) {
    this.store = store;
    this.name = name;
    this.help = help;
  }

  async get(): Promise<Family<CounterSample>> {
    const values = this.store.counted.map((series) => series.requests);
    return { help: this.help, name: this.name, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.store.resetRequests();
  }
}

/**
 * `http_request_duration_seconds` as registered on a prom-client Registry: the
 * histogram of a {@link RequestMetricsStore}. Per series, as prom-client's
 * Histogram writes them: one cumulative `_bucket` per bound (`le` the bound
 * itself, a number), `_bucket{le="+Inf"}`, `_sum`, `_count`; `get()` with the
 * labels spread after `le` (what `getMetricsAsJSON()` returns),
 * `getForPromString()` with them apart (what the text exposition uses).
 *
 * @example
 * registry.registerMetric(new RequestHistogramView(store, 'http_request_duration_seconds', 'Time to handle a request.') as never);
 */
export class RequestHistogramView {
  name: string;
  help: string;
  readonly type = 'histogram';
  aggregator = 'sum';
  readonly labelNames = REQUEST_LABEL_NAMES;
  readonly store: RequestMetricsStore;

  constructor(store: RequestMetricsStore, name: string, help: string) {
    this.store = store;
    this.name = name;
    this.help = help;
  }

  async get(): Promise<Family<HistogramSample>> {
    const { bounds, slots, observed } = this.store;
    const bucket = `${this.name}_bucket`;
    const sumName = `${this.name}_sum`;
    const countName = `${this.name}_count`;
    const values: HistogramSample[] = [];
    for (const { labels, count, sum, buckets } of observed) {
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += buckets[slots[i] as number] as number;
        values.push({ value: acc, metricName: bucket, exemplar: null, labels: { le: bounds[i] as number, ...labels } });
      }
      values.push({ value: count, metricName: bucket, exemplar: null, labels: { le: '+Inf', ...labels } });
      values.push({ value: sum, metricName: sumName, exemplar: undefined, labels: { ...labels } });
      values.push({ value: count, metricName: countName, exemplar: undefined, labels: { ...labels } });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  async getForPromString(): Promise<Family<HistogramTextSample>> {
    const { bounds, slots, observed } = this.store;
    const bucket = `${this.name}_bucket`;
    const sumName = `${this.name}_sum`;
    const countName = `${this.name}_count`;
    const values: HistogramTextSample[] = [];
    for (const { labels, count, sum, buckets } of observed) {
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += buckets[slots[i] as number] as number;
        values.push({ labels: { le: bounds[i] as number }, sharedLabels: labels, value: acc, metricName: bucket, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: sumName, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: labels, value: count, metricName: countName, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.store.resetDurations();
  }
}
