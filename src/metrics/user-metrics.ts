/**
 * prom-client's metric classes, the very copy flotilla runs (its dependency, in node_modules), for a
 * service's own metrics: no `prom-client` to install, no second copy beside flotilla's. Register
 * them in `app.registry` (`registers: [app.registry]`): a standalone App serves them on its metrics
 * endpoint, and in a cluster each worker's values are summed in the primary's `/metrics` with the
 * request metrics (docs/guides/metrics.md). Without `registers`, a metric lands in prom-client's
 * global registry, which nothing serves.
 *
 * @example
 * import { Counter, defineService } from 'flotilla';
 * export default defineService((app) => {
 *   const orders = new Counter({ name: 'orders_total', help: 'Orders placed.', labelNames: ['kind'], registers: [app.registry] });
 *   app.registerController({ routes: () => [{ method: 'POST', path: '/orders', handler: () => orders.inc({ kind: 'web' }) }] });
 * });
 */
export { Counter, Gauge, Histogram, type Registry, Summary } from 'prom-client';
