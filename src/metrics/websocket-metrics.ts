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
 * Registers (or reuses) the WebSocket metrics on a registry. No topic is a label here: see
 * {@link publishCounter} for the declared ones.
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
 * `flotilla_websocket_publishes_total{topic}`: `app.publish` calls in this process (a worker, the
 * primary's service thread), by topic for the topics `websockets.metricTopics` declares and `other` for
 * the rest: a topic becomes a label only when declared, so the series stay bounded.
 *
 * @example
 * const count = publishCounter(registry, ['books']);
 * count('books'); count('room:42'); // topic="books", topic="other"
 */
export function publishCounter(registry: Registry, declared: readonly string[]): (topic: string) => void {
  const counter = registeredCounter(registry, {
    name: 'flotilla_websocket_publishes_total',
    help: 'Messages published with app.publish, by topic for the declared ones (websockets.metricTopics), "other" for the rest.',
    labelNames: ['topic'],
  });
  const named = new Set(declared);
  for (const topic of [...named, 'other']) counter.inc({ topic }, 0);
  return (topic) => counter.inc({ topic: named.has(topic) ? topic : 'other' });
}
