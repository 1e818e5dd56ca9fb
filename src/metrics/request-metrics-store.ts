/** The labels of a request series, as prom-client stores them: the status as a string. */
export interface RequestLabels {
  readonly method: string;
  readonly route: string;
  readonly status: string;
}

/** A counter sample as prom-client's Counter keeps it and hands it out from `get()`: `{ value, labels }`. */
export interface CounterSample {
  value: number;
  labels: RequestLabels;
}

/** The metrics of one `(method, route, status)`. */
export interface RequestSeries {
  readonly labels: RequestLabels;
  /** `http_requests_total`'s sample; a new one after the counter is reset. */
  requests: CounterSample;
  /** `http_request_duration_seconds`: observations, their sum, and observations per bucket slot (not cumulative). */
  count: number;
  sum: number;
  readonly buckets: Float64Array;
}

type ByStatus = Map<number, RequestSeries>;

/**
 * The request metrics of a {@link PromMetricsCollector}: per `(method, route,
 * status)` one {@link RequestSeries}, found through nested Maps keyed by the
 * strings and the number as given (no label object, no hash string), with the
 * counter's value and the histogram's count, sum and bucket counts. What it
 * holds reads exactly as a prom-client Counter and Histogram fed the same
 * requests would (see `request-metric-views.ts`), quirks included:
 *
 * - series in the order of their first observation since the last reset, per metric;
 * - a value lands in the first bucket, in the order given, whose bound it does
 *   not exceed; bounds equal as strings share one count (prom-client keys its
 *   buckets by `String(bound)`), and a value above every bound is counted in a
 *   bound `-1` if there is one;
 * - the sum adds the observations in order, as prom-client does.
 *
 * @example
 * const store = new RequestMetricsStore([0.1, 1]);
 * store.record('GET', '/books/:id', 200, 0.042);
 * store.counted[0]?.requests.value; // 1
 */
export class RequestMetricsStore {
  /** The histogram's bounds, in the order given (`le` of each `_bucket` sample). */
  readonly bounds: readonly number[];
  /** Bucket index → slot of `buckets`; the last entry is the slot of values above every bound (or -1). */
  readonly slots: Int32Array;
  /** Series counted since the counter's last reset, in first-seen order. */
  counted: RequestSeries[] = [];
  /** Series observed since the histogram's last reset, in first-seen order. */
  observed: RequestSeries[] = [];
  readonly #bounds: Float64Array;
  readonly #slotCount: number;
  readonly #series = new Map<string, Map<string, ByStatus>>();

  constructor(bounds: readonly number[]) {
    this.bounds = Object.freeze([...bounds]);
    this.#bounds = Float64Array.from(bounds);
    const slotOf = new Map<string, number>();
    for (const bound of bounds) if (!slotOf.has(String(bound))) slotOf.set(String(bound), slotOf.size);
    this.#slotCount = slotOf.size;
    this.slots = Int32Array.from([...bounds.map((b) => slotOf.get(String(b)) as number), slotOf.get('-1') ?? -1]);
  }

  /** One request: the counter's increment and the histogram's observation of `seconds` (finite). */
  record(method: string, route: string, status: number, seconds: number): void {
    const series = this.#seriesOf(method, route, status);
    if (series.requests.value++ === 0) this.counted.push(series);
    this.#observe(series, seconds);
  }

  /** The counter's increment alone. */
  count(method: string, route: string, status: number): void {
    const series = this.#seriesOf(method, route, status);
    if (series.requests.value++ === 0) this.counted.push(series);
  }

  /** The histogram's observation alone. */
  observe(method: string, route: string, status: number, seconds: number): void {
    this.#observe(this.#seriesOf(method, route, status), seconds);
  }

  /** Zeroes the counter, as prom-client's `Counter.reset()`: no series until the next request. */
  resetRequests(): void {
    for (const series of this.counted) series.requests = { value: 0, labels: series.labels };
    this.counted = [];
    if (this.observed.length === 0) this.#series.clear();
  }

  /** Zeroes the histogram, as prom-client's `Histogram.reset()`. */
  resetDurations(): void {
    for (const series of this.observed) {
      series.count = 0;
      series.sum = 0;
      series.buckets.fill(0);
    }
    this.observed = [];
    if (this.counted.length === 0) this.#series.clear();
  }

  #observe(series: RequestSeries, seconds: number): void {
    if (series.count++ === 0) this.observed.push(series);
    series.sum += seconds;
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && !(seconds <= (bounds[i] as number))) i++;
    const slot = this.slots[i] as number;
    if (slot >= 0) (series.buckets[slot] as number)++;
  }

  #seriesOf(method: string, route: string, status: number): RequestSeries {
    let byRoute = this.#series.get(method);
    if (byRoute === undefined) {
      byRoute = new Map();
      this.#series.set(method, byRoute);
    }
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      byRoute.set(route, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      const labels: RequestLabels = { method, route, status: String(status) };
      series = { labels, requests: { value: 0, labels }, count: 0, sum: 0, buckets: new Float64Array(this.#slotCount) };
      byStatus.set(status, series);
    }
    return series;
  }
}
