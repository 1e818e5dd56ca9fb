import type { ResolvedConfig } from '../../config/types.ts';
import { createError } from '../../errors/flotilla-error.ts';
import type { HealthChecker } from '../core/registrar.ts';
import type { Route } from '../core/route.ts';
import { healthRoute } from './health.ts';

/**
 * An App's `GET /health` (unless `disableHealth`), routed through `add`, and its checkers:
 * returns `registerHealthChecker`, which refuses a malformed checker and a name taken already.
 *
 * @example
 * const register = installHealth(config, () => lifecycle.draining, (route) => router.add(route, '', [], [], { exempt: true }));
 * register({ name: 'db', check: (signal) => pool.query('select 1', { signal }) });
 */
export function installHealth(
  config: ResolvedConfig,
  draining: () => boolean,
  add: (route: Route) => void,
): (checker: HealthChecker) => void {
  const checkers: HealthChecker[] = [];
  const source = {
    checkers,
    timeoutMs: config.health.timeoutMs,
    production: config.env === 'production',
    get draining() {
      return draining();
    },
  };
  if (!config.disableHealth) add(healthRoute('/health', source));
  return (checker) => {
    if (typeof checker?.check !== 'function' || typeof checker.name !== 'string' || checker.name === '') {
      throw createError('FLO_ERR_BAD_HEALTH_CHECKER');
    }
    if (checkers.some((c) => c.name === checker.name)) throw createError('FLO_ERR_DUPLICATE_HEALTH_CHECKER', { name: checker.name });
    checkers.push(checker);
  };
}
