/** A publish as it travels between replicas: its origin (the replica's name), topic, data (base64 when binary). */
export interface TopicEnvelope {
  readonly origin: string;
  readonly topic: string;
  readonly data: string;
  readonly binary: boolean;
}

/**
 * The text a coordinator broadcasts for a publish.
 *
 * @example
 * coordinator.broadcast(encodeEnvelope({ origin: 'host/1/ab12cd', topic: 'books', data: '{}', binary: false }));
 */
export function encodeEnvelope(e: TopicEnvelope): string {
  return JSON.stringify({ o: e.origin, t: e.topic, d: e.data, b: e.binary });
}

/** The envelope of a broadcast; `undefined` for anything malformed. */
export function decodeEnvelope(text: string): TopicEnvelope | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { o, t, d, b } = parsed as Record<string, unknown>;
  if (typeof o !== 'string' || typeof t !== 'string' || typeof d !== 'string' || typeof b !== 'boolean') return undefined;
  return { origin: o, topic: t, data: d, binary: b };
}
