import type { MetricFamily } from '../../src/ipc/protocol.ts';

/**
 * Metric families as a worker pushes them (`flotilla:metrics`): a counter and a histogram, its
 * series keyed and its buckets listed. The IPC tests build messages from them.
 */
export const COUNTER_FAMILY: MetricFamily = {
  name: 'http_requests_total',
  help: 'Requests',
  type: 'counter',
  aggregator: 'sum',
  series: ['http_requests_total{route="/a"}'],
  values: [3],
};

export const HISTOGRAM_FAMILY: MetricFamily = {
  name: 'd_seconds',
  help: 'Durations',
  type: 'histogram',
  aggregator: 'sum',
  series: ['route="/a",method="GET"', ''],
  values: [1, 2, 0.5, 2, 'NaN', '+Inf', 0, 0],
  keys: ['method="GET",route="/a"', ''],
  buckets: ['0.1', '+Inf'],
};
