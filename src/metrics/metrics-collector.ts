/**
 * One finished HTTP request, as the App reports it to a {@link MetricsCollector}.
 *
 * @example
 * collector.recordRequest({ method: 'GET', route: '/books/:id', status: 200, durationMs: 4.2 });
 */
export interface RequestMetric {
  /** Request method, upper case (`GET`). */
  method: string;
  /** The route template (`/books/:id`), never the raw URL; a fixed label for unmatched requests. */
  route: string;
  /** Response status code. */
  status: number;
  /** Time from receiving the request to finishing the response, in milliseconds. */
  durationMs: number;
}

/**
 * Receives one call per finished request. It runs on every request, so it must
 * be cheap, synchronous and never throw.
 *
 * @example
 * const counting: MetricsCollector = { recordRequest: (m) => { counts[m.status] = (counts[m.status] ?? 0) + 1; } };
 * app.setMetricsCollector(counting);
 */
export interface MetricsCollector {
  recordRequest(m: RequestMetric): void;
}
