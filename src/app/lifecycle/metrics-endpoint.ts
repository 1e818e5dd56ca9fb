import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { serveMetrics } from '../../metrics/endpoint.ts';

/**
 * The standalone App's own metrics endpoint (`metrics` in the config): `registry` served at
 * `metrics.path` on `metrics.port`, apart from the App's port. A failed collection is logged and
 * answered 500. Resolves once listening.
 *
 * @example
 * const { server, port } = await openMetricsEndpoint(registry, config.metrics, logger);
 */
export function openMetricsEndpoint(
  registry: Registry,
  options: ResolvedConfig['metrics'],
  logger: Logger,
): Promise<{ server: Server; port: number }> {
  const source = {
    collect: () => registry.metrics(),
    contentType: registry.contentType,
    onError: (err: unknown) => logger.error({ err }, 'metrics collection failed'),
  };
  return serveMetrics(source, options);
}
