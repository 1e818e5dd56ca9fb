/**
 * A published message's payload in `flotilla:publish` and `flotilla:deliver`: text as it is, bytes in
 * base64 (IPC and message ports carry JSON-safe values).
 *
 * @example
 * const { data, binary } = encodePayload(Buffer.from([1, 2])); // { data: 'AQI=', binary: true }
 * decodePayload(data, binary); // <Buffer 01 02>
 */
export function encodePayload(payload: string | Buffer): { data: string; binary: boolean } {
  return typeof payload === 'string' ? { data: payload, binary: false } : { data: payload.toString('base64'), binary: true };
}

/** The payload {@link encodePayload} encoded. */
export function decodePayload(data: string, binary: boolean): string | Buffer {
  return binary ? Buffer.from(data, 'base64') : data;
}
