import { collectDefaultMetrics, type Metric, Registry } from 'prom-client';

/** prom-client's default metrics, collected once per process: each collection adds a GC observer that is never removed. */
let processMetrics: Registry | undefined;

/** Adds the process metrics (`process_*`, `nodejs_*`) to an App's registry; every App of the process shares them. */
export function registerProcessMetrics(registry: Registry): void {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  // getMetricsAsArray() gives the metric objects themselves; prom-client's typings only describe their fields
  for (const metric of processMetrics.getMetricsAsArray()) registry.registerMetric(metric as unknown as Metric);
}
