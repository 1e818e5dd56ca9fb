import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { ReplicaTopics, type TopicTransport } from '../../coordination/replica-topics.ts';
import { publishCounter } from '../../metrics/websocket-metrics.ts';
import type { Ctx, SocketTopics } from '../core/ctx.ts';
import type { Route } from '../core/route.ts';
import { appHub } from './app-hub.ts';
import { localTopics, publishedPayload } from './topic-transport.ts';
import type { WebSocketHub } from './websocket-hub.ts';
import { webSocketHandler } from './websocket-route.ts';

/** What an App gives its WebSockets and topics (see {@link installWebSockets}). */
export interface WebSocketParts {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  /** Where the hub's metrics and the publishes' counter go (when `metrics.enabled`). */
  readonly registry: Registry;
  readonly role: string;
  /** Aborts when the App starts draining: the sockets are asked to leave (1001). */
  readonly drain: AbortSignal;
  /** Aborts at the shutdown deadline: the sockets left are terminated. */
  readonly deadline: AbortSignal;
  /** Whether the App is closing already (a websocket route added late): the hub starts drained. */
  closing(): boolean;
  /** The core's `attachSocket`: gives the route's `ctx` its socket's topics. */
  readonly attach: (ctx: Ctx, topics: SocketTopics) => void;
  /** How publishes reach the other processes (`AppOptions.topics`); default: see {@link installWebSockets}. */
  readonly topics: TopicTransport | undefined;
}

/** An App's WebSockets and topics, as its facade uses them. */
export interface AppWebSockets {
  /** The route as served: a `websocket` route's handler opens its socket on the App's hub (made then). */
  served(route: Route): Route;
  /** `app.publish`: checks the topic and payload, counts the publish, sends it. */
  publish(topic: string, data: unknown): void;
  /** Moves with WebSocket traffic (see `app.socketActivity`). */
  readonly activity: number;
  /** Resolves once no WebSocket is open. */
  idle(): Promise<void>;
  /** The other replicas' topics (a standalone App with `coordination.url`), which the lifecycle opens and closes. */
  readonly replicas: ReplicaTopics | undefined;
}

/**
 * An App's WebSockets: the hub, made with the first websocket route, and the topics' transport (the
 * one given, a cluster worker's through its primary; else the other replicas' with `coordination.url`
 * for a standalone App; else this App's own sockets only).
 *
 * @example
 * const sockets = installWebSockets({ config, logger, registry, role, drain, deadline, closing, attach: attachSocket, topics });
 * router.add(sockets.served(route), prefix, middlewares, hooks);
 */
export function installWebSockets(parts: WebSocketParts): AppWebSockets {
  const { config } = parts;
  let hub: WebSocketHub | undefined;
  let publishes: ((topic: string) => void) | undefined;
  let published = 0;
  // a standalone App with coordination.url reaches the other replicas itself; a cluster worker's go through its primary
  const replicas =
    parts.topics === undefined && parts.role === 'standalone' && config.coordination.url !== undefined
      ? new ReplicaTopics(config, parts.logger)
      : undefined;
  const topics = parts.topics ?? replicas ?? localTopics();
  topics.open((topic, payload) => hub?.deliver(topic, payload));
  const hubOf = (): WebSocketHub => {
    hub ??= appHub({ ...parts, closing: parts.closing() });
    return hub;
  };
  return {
    served(route) {
      if (typeof route !== 'object' || route === null || route.websocket === undefined) return route;
      const made = hubOf();
      return { ...route, handler: webSocketHandler(route, () => made, parts.attach) };
    },
    publish(topic, data) {
      const payload = publishedPayload(topic, data, config.websockets.maxMessageBytes);
      if (config.metrics.enabled) {
        publishes ??= publishCounter(parts.registry, config.websockets.metricTopics);
        publishes(topic);
      }
      published++;
      topics.publish(topic, payload);
    },
    get activity() {
      return (hub?.activity ?? 0) + published;
    },
    idle: () => hub?.idle() ?? Promise.resolve(),
    replicas,
  };
}
