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

/**
 * prom-client's `collectDefaultMetrics`, its modules loaded at the first call: the primary's main
 * thread collects its process metrics once its workers are forked.
 *
 * @example
 * collectDefaultMetrics({ register: registry, prefix: 'flotilla_primary_' });
 */
export function collectDefaultMetrics<T extends Prom.RegistryContentType>(config?: Prom.DefaultMetricsCollectorConfiguration<T>): void {
  (require('prom-client/lib/defaultMetrics') as typeof Prom.collectDefaultMetrics)(config);
}
