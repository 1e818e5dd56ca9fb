import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration } from 'prom-client';
import { createError } from '../errors/flotilla-error.ts';
import { Counter, Gauge, Histogram, type Registry } from './prom-client.ts';

/**
 * The counter named `config.name` on `registry`: the one already registered
 * there (so binding the same registry twice is harmless), else a new one.
 *
 * @example
 * const runs = registeredCounter(registry, { name: 'jobs_total', help: 'Jobs run', labelNames: ['job'] });
 */
export function registeredCounter<T extends string>(registry: Registry, config: CounterConfiguration<T>): Counter<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing === undefined) return new Counter({ ...config, registers: [registry] });
  assertSameShape(existing, Counter, config.labelNames);
  return existing as Counter<T>;
}

/**
 * The histogram named `config.name` on `registry`: the one already registered
 * there, else a new one.
 *
 * @example
 * const duration = registeredHistogram(registry, { name: 'job_seconds', help: 'Job duration', labelNames: ['job'] });
 */
export function registeredHistogram<T extends string>(registry: Registry, config: HistogramConfiguration<T>): Histogram<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing === undefined) return new Histogram({ ...config, registers: [registry] });
  assertSameShape(existing, Histogram, config.labelNames);
  return existing as Histogram<T>;
}

/**
 * The gauge named `config.name` on `registry`: the one already registered there, else a new one.
 *
 * @example
 * const held = registeredGauge(registry, { name: 'lease_held', help: 'Whether the lease is held' });
 */
export function registeredGauge<T extends string>(registry: Registry, config: GaugeConfiguration<T>): Gauge<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing === undefined) return new Gauge({ ...config, registers: [registry] });
  assertSameShape(existing, Gauge, config.labelNames);
  return existing as Gauge<T>;
}

function assertSameShape(metric: object, type: typeof Counter | typeof Histogram | typeof Gauge, labelNames: readonly string[] = []): void {
  const { name, labelNames: existing = [] } = metric as { name?: string; labelNames?: readonly string[] };
  if (!(metric instanceof type)) {
    throw createError('FLO_ERR_METRIC_CONFLICT', { name, conflict: `but is not a ${type.name.toLowerCase()}` });
  }
  if (existing.length !== labelNames.length || labelNames.some((l) => !existing.includes(l))) {
    throw createError('FLO_ERR_METRIC_CONFLICT', {
      name,
      conflict: `with labels [${existing.join(', ')}], expected [${labelNames.join(', ')}]`,
    });
  }
}
