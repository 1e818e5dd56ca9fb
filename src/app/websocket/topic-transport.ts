import type { TopicPayload, TopicTransport } from '../../coordination/replica-topics.ts';
import { createError } from '../../errors/flotilla-error.ts';
import { checkTopic } from './websocket-topic.ts';

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
