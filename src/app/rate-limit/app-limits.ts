import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import type { CounterStore } from '../../coordination/counter-store.ts';
import { openCounterStore } from '../../coordination/counter-stores.ts';
import { rateLimitCounter } from '../../metrics/rate-limit-metrics.ts';
import type { LimiterHost } from './limiter.ts';

/**
 * What an App's rate-limited routes share, made with the first one (a service without limits opens
 * no store): the counter store (the App's own when given, e.g. a cluster worker's through its
 * primary, else the config's), the metric, and a logger.
 *
 * @example
 * const host = appLimits({ config, logger, registry, store: undefined }); // memory, or coordination.url's
 */
export function appLimits(options: {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly store: CounterStore | undefined;
}): LimiterHost {
  const { config, logger, registry } = options;
  return {
    store: options.store ?? openCounterStore(config, logger),
    counter: config.metrics.enabled ? rateLimitCounter(registry) : undefined,
    logger: logger.child({ component: 'rate-limit' }),
  };
}
