import { mediaTypeMatches, mediaTypeOf, unsupported } from './common.ts';

/** How a route reads its request body (the route option `body`); `json` by default. */
export type BodyKind = 'json' | 'text' | 'raw' | 'form' | 'multipart' | 'stream';

/** Every body kind, in documentation order. */
export const BODY_KINDS: readonly BodyKind[] = ['json', 'text', 'raw', 'form', 'multipart', 'stream'];

/**
 * The media type the OpenAPI document shows for each kind's request body.
 * `text` reads any `text/*`, `raw` and `stream` any media type unless the
 * route narrows them (see `bodyMediaTypes`).
 */
export const BODY_MEDIA_TYPES: Readonly<Record<BodyKind, string>> = {
  json: 'application/json',
  text: 'text/plain',
  raw: 'application/octet-stream',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  stream: 'application/octet-stream',
};

/** The media types a route's body is documented with: the ones it narrowed `raw` or `stream` to, else its kind's. */
export function bodyMediaTypes(kind: BodyKind, mediaTypes?: readonly string[]): string[] {
  if ((kind === 'raw' || kind === 'stream') && mediaTypes !== undefined && mediaTypes.length > 0) return [...mediaTypes];
  return [BODY_MEDIA_TYPES[kind]];
}

/** A `Content-Type` among `accepted` (exact types or `type/*` wildcards), else a 415 listing them (a malformed one included). */
export function checkMediaTypes(header: string | undefined, accepted: readonly string[]): void {
  const { type } = mediaTypeOf(header, accepted);
  if (!accepted.some((pattern) => mediaTypeMatches(type, pattern))) throw unsupported(accepted, header);
}
