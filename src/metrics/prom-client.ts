import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

/*
 * prom-client's classes, each from its own module: the package's entry point also loads its
 * Pushgateway (node:https, and with it node:tls), its cluster aggregator and its default metrics (a
 * score of modules and the OpenTelemetry API). The primary's main thread, which loads no App, forks
 * its workers some 40 ms sooner without them; it collects its process metrics once they are forked.
 * The modules are the package's own: `import { Counter } from 'prom-client'` (a project's, or the
 * App's `user-metrics.ts`) is this very class.
 */

export type Registry = Prom.Registry;
export const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
export type Counter<T extends string = string> = Prom.Counter<T>;
export const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
export type Histogram<T extends string = string> = Prom.Histogram<T>;
export const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;
export type Summary<T extends string = string> = Prom.Summary<T>;
export const Summary = require('prom-client/lib/summary') as typeof Prom.Summary;

/** A module of prom-client's `lib/metrics/`: it registers its metrics in `registry`. */
type DefaultMetric = (registry: Registry, config: { prefix?: string; eventLoopMonitoringPrecision?: number }) => void;

/**
 * The modules prom-client's `collectDefaultMetrics` runs (its `lib/defaultMetrics.js`, whose
 * `metricsList` a test holds this list to), in its order, but its first: `processCpuTotal`, which
 * loads the OpenTelemetry API for exemplars flotilla never turns on (some 15 ms of the primary's
 * start, on the cold start's path), is {@link processCpuTotal} here.
 */
export const DEFAULT_METRIC_MODULES = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processResources',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
] as const;

/**
 * prom-client's default metrics (`process_*`, `nodejs_*`, named with `prefix`) in `register`, as its
 * `collectDefaultMetrics` adds them (the same names, help, types and order), their modules loaded at
 * the first call: the primary's main thread collects its process metrics once its workers are forked.
 *
 * @example
 * collectDefaultMetrics({ register: registry, prefix: 'flotilla_primary_', eventLoopMonitoringPrecision: 1_000 });
 */
export function collectDefaultMetrics(config: { register: Registry; prefix?: string; eventLoopMonitoringPrecision?: number }): void {
  const options = { eventLoopMonitoringPrecision: 10, ...config };
  processCpuTotal(options.register, options.prefix ?? '');
  for (const name of DEFAULT_METRIC_MODULES) (require(`prom-client/lib/metrics/${name}`) as DefaultMetric)(options.register, options);
}

/**
 * prom-client's `process_cpu_user_seconds_total`, `process_cpu_system_seconds_total` and
 * `process_cpu_seconds_total`, without exemplars: the user counter's `collect` moves all three by
 * the CPU time used since the last scrape, as prom-client's `processCpuTotal` does.
 */
function processCpuTotal(registry: Registry, prefix: string): void {
  const registers = [registry];
  let last = process.cpuUsage();
  const user = new Counter({
    name: `${prefix}process_cpu_user_seconds_total`,
    help: 'Total user CPU time spent in seconds.',
    registers,
    collect() {
      const now = process.cpuUsage();
      const userS = (now.user - last.user) / 1e6;
      const systemS = (now.system - last.system) / 1e6;
      last = now;
      user.inc(userS);
      system.inc(systemS);
      total.inc(userS + systemS);
    },
  });
  const system = new Counter({
    name: `${prefix}process_cpu_system_seconds_total`,
    help: 'Total system CPU time spent in seconds.',
    registers,
  });
  const total = new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: 'Total user and system CPU time spent in seconds.',
    registers,
  });
}
