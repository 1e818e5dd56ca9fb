import type { Counter, Gauge, Registry } from 'prom-client';

/** A counter's child for one label set (prom-client's `Counter.labels`). */
type Child = ReturnType<Counter<string>['labels']>;

import { registeredCounter, registeredGauge } from './registered-metric.ts';

/** The WebSocket metrics of a process; summed over the cluster by the primary like every family. */
export interface WebSocketMetrics {
  /** `flotilla_websocket_connections`: the sockets open now. */
  readonly connections: Gauge;
  /** `flotilla_websocket_messages_total{direction="in"}`: messages received from clients. */
  readonly messagesIn: Child;
  /** `flotilla_websocket_messages_total{direction="out"}`: published messages sent to sockets. */
  readonly messagesOut: Child;
  /** `flotilla_websocket_slow_consumers_total`: sockets closed with 1013 because their unsent data passed `websockets.maxBufferedBytes`. */
  readonly slowConsumers: Counter;
}

/**
 * Registers (or reuses) the WebSocket metrics on a registry. Topics are never labels: their number is
 * the service's clients' to choose, and a label each would grow the registry without bound.
 *
 * @example
 * const metrics = webSocketMetrics(registry);
 * metrics.connections.inc();
 */
export function webSocketMetrics(registry: Registry): WebSocketMetrics {
  const connections = registeredGauge(registry, {
    name: 'flotilla_websocket_connections',
    help: 'WebSockets open now.',
  });
  const messages = registeredCounter(registry, {
    name: 'flotilla_websocket_messages_total',
    help: 'WebSocket messages received from clients (in) and published messages sent to sockets (out).',
    labelNames: ['direction'],
  });
  const slowConsumers = registeredCounter(registry, {
    name: 'flotilla_websocket_slow_consumers_total',
    help: 'WebSockets closed with 1013 because their unsent data passed websockets.maxBufferedBytes.',
  });
  connections.set(0);
  return {
    connections,
    messagesIn: messages.labels({ direction: 'in' }),
    messagesOut: messages.labels({ direction: 'out' }),
    slowConsumers,
  };
}

/**
 * `flotilla_websocket_publishes_total`: `app.publish` calls in this process (a worker, the primary's
 * service thread), topics not labelled.
 *
 * @example
 * publishCounter(registry).inc();
 */
export function publishCounter(registry: Registry): Counter {
  return registeredCounter(registry, {
    name: 'flotilla_websocket_publishes_total',
    help: 'Messages published with app.publish (each delivered to every subscribed socket of the deployment).',
  });
}
