/**
 * Media types worth compressing: text, and the structured or script formats
 * that are text underneath (JSON, XML and their `+json`/`+xml` suffixes,
 * JavaScript, form data, SVG, WebAssembly…). Images, audio, video, archives
 * and fonts other than the uncompressed TrueType/OpenType are compressed
 * already. Event streams are left out: see {@link isCompressible}.
 */
const COMPRESSIBLE =
  /^(?:text\/(?!event-stream\b)[^;]+|[^/;]+\/[^;]+\+(?:json|xml|text|yaml)|application\/(?:json|x-ndjson|ndjson|jsonl|javascript|x-javascript|ecmascript|xml|x-www-form-urlencoded|wasm|graphql|yaml|x-yaml|toml|rtf)|image\/(?:svg\+xml|x-icon|vnd\.microsoft\.icon|bmp)|font\/(?:otf|ttf)|application\/(?:x-font-ttf|x-font-otf|vnd\.ms-fontobject))\s*(?:;|$)/i;

/**
 * Whether a reply of this `Content-Type` is compressed. `text/event-stream` is
 * not: an event must reach the client the moment it is written, and a proxy
 * between may hold a compressed stream back to fill its buffers (the event
 * stream also says `Cache-Control: no-transform`).
 *
 * @example
 * isCompressible('application/json; charset=utf-8'); // true
 * isCompressible('image/png');                       // false
 */
export function isCompressible(type: string): boolean {
  if (type === '') return false;
  let compressible = seen.get(type);
  if (compressible === undefined) {
    compressible = COMPRESSIBLE.test(type);
    // a service sends a handful of types: the answers are kept, a bounded few, so no regex runs per reply
    if (seen.size < 64) seen.set(type, compressible);
  }
  return compressible;
}

const seen = new Map<string, boolean>();
