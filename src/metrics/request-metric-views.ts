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

/** What the Registry reads of a metric besides `get()`: both views share it. */
abstract class RequestMetricView {
  name: string;
  help: string;
  abstract readonly type: string;
  aggregator = 'sum';
  readonly labelNames = REQUEST_LABEL_NAMES;
  readonly store: RequestMetricsStore;

  constructor(store: RequestMetricsStore, name: string, help: string) {
    this.store = store;
    this.name = name;
    this.help = help;
  }
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
export class RequestCounterView extends RequestMetricView {
  readonly type = 'counter';

  async get(): Promise<Family<CounterSample>> {
    const values = this.store.counted.map((series) => series.requests);
    return { help: this.help, name: this.name, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.store.resetRequests();
  }
}

/** One sample of a histogram series: `le` for a `_bucket` sample, undefined for `_sum` and `_count`. */
type Shape<T> = (value: number, metricName: string, labels: RequestLabels, le?: number | '+Inf') => T;

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
export class RequestHistogramView extends RequestMetricView {
  readonly type = 'histogram';

  async get(): Promise<Family<HistogramSample>> {
    const values = this.#samples<HistogramSample>((value, metricName, labels, le) =>
      le === undefined
        ? { value, metricName, exemplar: undefined, labels: { ...labels } }
        : { value, metricName, exemplar: null, labels: { le, ...labels } },
    );
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  async getForPromString(): Promise<Family<HistogramTextSample>> {
    const values = this.#samples<HistogramTextSample>((value, metricName, labels, le) => ({
      labels: le === undefined ? {} : { le },
      sharedLabels: labels,
      value,
      metricName,
      exemplar: le === undefined ? undefined : null,
    }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.store.resetDurations();
  }

  /** Every series' samples in prom-client's order, each shaped by `shape`. */
  #samples<T>(shape: Shape<T>): T[] {
    const { bounds, slots, observed } = this.store;
    const bucket = `${this.name}_bucket`;
    const values: T[] = [];
    for (const { labels, count, sum, buckets } of observed) {
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += buckets[slots[i] as number] as number;
        values.push(shape(acc, bucket, labels, bounds[i] as number));
      }
      values.push(shape(count, bucket, labels, '+Inf'));
      values.push(shape(sum, `${this.name}_sum`, labels));
      values.push(shape(count, `${this.name}_count`, labels));
    }
    return values;
  }
}
