import type { Metric } from 'prom-client';
import { collectDefaultMetrics, Registry } from './prom-client.ts';

/** prom-client's default metrics, collected once per process: each collection adds a GC observer that is never removed. */
let processMetrics: Registry | undefined;

/**
 * prom-client's default gauges named like counters (`promtool check metrics`:
 * "non-counter metrics should not have "_total" suffix"). Each is the sum over
 * `type` of the labelled gauge of the same name without `_total`
 * (`sum(nodejs_active_handles)`), so nothing is lost by leaving them out.
 */
const TOTAL_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * prom-client samples the event loop's delay (`nodejs_eventloop_lag_*`) with a libuv timer every this
 * many ms: its default of 10 wakes an idle process 100 times a second. Once a second still records a
 * blocked loop (a late timer is a sample as long as the block); flotilla's per-worker delay gauges come
 * from the heartbeat's vitals (`src/process/vitals.ts`), sampled finely while the worker is busy.
 */
export const EVENT_LOOP_MONITORING_MS = 1_000;

/** Removes prom-client's `nodejs_active_*_total` gauges (named with `prefix`) from a registry `collectDefaultMetrics` filled. */
export function withoutTotalGauges(registry: Registry, prefix = ''): void {
  for (const name of TOTAL_GAUGES) registry.removeSingleMetric(`${prefix}${name}`);
}

/**
 * Adds the process metrics (`process_*`, `nodejs_*`) to an App's registry; every App of the process shares them.
 * prom-client's `nodejs_active_*_total` gauges are left out (see {@link withoutTotalGauges}).
 */
export function registerProcessMetrics(registry: Registry): void {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
    withoutTotalGauges(processMetrics);
  }
  // getMetricsAsArray() gives the metric objects themselves; prom-client's typings only describe their fields
  for (const metric of processMetrics.getMetricsAsArray()) registry.registerMetric(metric as unknown as Metric);
}
