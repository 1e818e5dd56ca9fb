import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import type { CounterStore } from '../../coordination/counter-store.ts';
import type { LimiterFactory } from '../core/router.ts';
import { appLimits } from './app-limits.ts';
import { type LimiterHost, routeLimit } from './limiter.ts';

/** An App's rate limits, as its facade uses them. */
export interface AppRateLimits {
  /** Makes a rate-limited route's limit (the router asks at registration). */
  readonly limiter: LimiterFactory;
  /** Closes the counter store, when one was opened; a failure is logged. */
  close(): void;
}

/**
 * An App's rate limits: the counter store, its metric and logger are made with the first
 * rate-limited route (a service without limits opens no store), the given store (`AppOptions.counterStore`)
 * else the config's.
 *
 * @example
 * const limits = installRateLimits({ config, logger, registry, store: options.counterStore });
 * const router = new Router({ …, limiter: limits.limiter });
 */
export function installRateLimits(parts: {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly store: CounterStore | undefined;
}): AppRateLimits {
  let host: LimiterHost | undefined;
  return {
    limiter: (policy, route) => {
      host ??= appLimits(parts);
      return routeLimit(policy, route, host);
    },
    close() {
      host?.store.close().catch((error: unknown) => parts.logger.warn({ err: error }, 'closing the rate-limit store failed'));
    },
  };
}
