import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { webSocketMetrics } from '../../metrics/websocket-metrics.ts';
import { WebSocketHub } from './websocket-hub.ts';

/** What an App gives its WebSocket hub. */
export interface AppHubOptions {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  /** Where the hub's metrics go (when `metrics.enabled`). */
  readonly registry: Registry;
  /** Aborts when the App starts draining: the sockets are asked to leave (1001). */
  readonly drain: AbortSignal;
  /** Aborts at the shutdown deadline: the sockets left are terminated. */
  readonly deadline: AbortSignal;
  /** Whether the App is closing already (a websocket route added late): the hub starts drained. */
  readonly closing: boolean;
}

/**
 * An App's WebSocket hub, made with its first websocket route: its metrics registered, the App's
 * drain and deadline watched.
 *
 * @example
 * const hub = appHub({ config, logger, registry, drain: drain.signal, deadline: deadline.signal, closing: false });
 */
export function appHub(options: AppHubOptions): WebSocketHub {
  const { config, logger, registry } = options;
  const metrics = config.metrics.enabled ? webSocketMetrics(registry) : undefined;
  const hub = new WebSocketHub(config.websockets, logger, metrics);
  hub.watch(options.drain, options.deadline);
  if (options.closing) hub.drain();
  return hub;
}
