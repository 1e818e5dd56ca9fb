import { createError } from '../../errors/flotilla-error.ts';
import { checkTopic } from './websocket-topic.ts';
/** A published message as it is delivered: a string is sent as a text frame, bytes as a binary one. */
export type TopicPayload = string | Buffer;

/**
 * How `app.publish` reaches every process that holds sockets: a standalone App delivers to its own
 * (`localTopics`); a cluster worker sends each publish to the primary, which hands it to every
 * worker, itself included, and to the other replicas (src/worker/ipc-topics.ts).
 *
 * @example
 * const transport: TopicTransport = { publish: (topic, payload) => send(topic, payload), open: (deliver) => onDelivery(deliver) };
 */
export interface TopicTransport {
  /** Sends a publish on its way; what comes back is delivered through `open`'s `deliver`, in publish order. */
  publish(topic: string, payload: TopicPayload): void;
  /** Called once by the App: `deliver` sends a message to the App's sockets subscribed to its topic. */
  open(deliver: (topic: string, payload: TopicPayload) => void): void;
}

/**
 * The transport of an App alone: a publish is delivered to its own sockets at once.
 *
 * @example
 * const topics = localTopics(); topics.open(deliver); topics.publish('books', '{"id":1}');
 */
export function localTopics(): TopicTransport {
  let deliver: (topic: string, payload: TopicPayload) => void = () => {};
  return {
    publish: (topic, payload) => deliver(topic, payload),
    open: (d) => {
      deliver = d;
    },
  };
}

/**
 * What `app.publish(topic, data)` sends: a string as it is, bytes (a Buffer, a typed array, an
 * ArrayBuffer) as a binary message, anything else as JSON.
 *
 * @example
 * toPayload({ id: 1 }); // '{"id":1}'
 */
export function toPayload(data: unknown): TopicPayload {
  if (typeof data === 'string' || Buffer.isBuffer(data)) return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return JSON.stringify(data) ?? 'null';
}

/** The bytes a payload takes on the wire. */
export function payloadBytes(payload: TopicPayload): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

/**
 * What `app.publish(topic, data)` checks and sends, for the App and the primary's service part alike:
 * the topic (`FLO_ERR_BAD_TOPIC`), and a payload of at most `maxBytes` (`FLO_ERR_PUBLISH_TOO_LARGE`).
 *
 * @example
 * const payload = publishedPayload('books', book, config.websockets.maxMessageBytes);
 */
export function publishedPayload(topic: string, data: unknown, maxBytes: number): TopicPayload {
  checkTopic(topic);
  const payload = toPayload(data);
  const bytes = payloadBytes(payload);
  if (bytes > maxBytes) throw createError('FLO_ERR_PUBLISH_TOO_LARGE', { topic: JSON.stringify(topic), bytes, max: maxBytes });
  return payload;
}
