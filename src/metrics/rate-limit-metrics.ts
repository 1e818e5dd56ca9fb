import type { Counter, Registry } from 'prom-client';
import { registeredCounter } from './registered-metric.ts';

/**
 * What a rate limit decided for a request: the `result` label of `flotilla_rate_limit_requests_total`.
 * `allowed`: counted and within the limit; `limited`: refused 429; `failed-open`: the count could not
 * be had and the route admits then; `failed-closed`: it could not, and the route answered 503.
 *
 * @example
 * const result: RateLimitResult = 'limited';
 */
export type RateLimitResult = 'allowed' | 'limited' | 'failed-open' | 'failed-closed';

/**
 * Registers (or reuses) `flotilla_rate_limit_requests_total{route,result}`: the requests of routes
 * with a rate limit, by route template (never the key: one series per client would be unbounded).
 *
 * @example
 * const decisions = rateLimitCounter(registry);
 * decisions.inc({ route: '/login', result: 'limited' });
 */
export function rateLimitCounter(registry: Registry): Counter<'route' | 'result'> {
  return registeredCounter(registry, {
    name: 'flotilla_rate_limit_requests_total',
    help: 'Requests of rate-limited routes, by route template and result (allowed; limited: 429; failed-open: the store failed, admitted; failed-closed: the store failed, 503).',
    labelNames: ['route', 'result'],
  });
}
