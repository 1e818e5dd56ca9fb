import type { Gauge, Registry } from 'prom-client';
import { registeredGauge } from './registered-metric.ts';

/**
 * Registers (or reuses) `flotilla_admission_state` on a registry, at 0: 1 while this process's
 * admission control sheds new requests, 0 while it admits them all. The primary sums its workers'
 * gauges, so the cluster's value is the number of workers shedding.
 *
 * @example
 * const state = admissionGauge(registry);
 * state.set(1); // shedding
 */
export function admissionGauge(registry: Registry): Gauge {
  const gauge = registeredGauge(registry, {
    name: 'flotilla_admission_state',
    help: "1 while a worker's admission control sheds new requests (their wait stayed above overload.delayTargetMs), 0 while it admits; summed over the workers: the number of workers shedding.",
  });
  gauge.set(0);
  return gauge;
}
