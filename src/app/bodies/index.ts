import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { type FormBody, type FormLimits, readFormBody } from './form.ts';
import { readJsonBody } from './json.ts';
import type { BodyKind } from './kinds.ts';
import { readBufferedMultipartBody, readMultipartBody } from './multipart.ts';
import type { BufferedMultipart, MultipartBody, MultipartOptions } from './multipart-types.ts';
import { readRawBody } from './raw.ts';
import { readStreamBody } from './stream.ts';
import { readTextBody } from './text.ts';

export { hasBody } from './common.ts';
export { DEFAULT_FORM_FIELDS, type FormBody, type FormLimits, readFormBody } from './form.ts';
export { MAX_BODY_DEPTH, readJsonBody } from './json.ts';
export { BODY_KINDS, BODY_MEDIA_TYPES, type BodyKind, bodyMediaTypes } from './kinds.ts';
export { readBufferedMultipartBody, readMultipartBody } from './multipart.ts';
export {
  type BufferedFile,
  type BufferedMultipart,
  MULTIPART_DEFAULTS,
  type MultipartBody,
  type MultipartField,
  type MultipartFile,
  type MultipartLimits,
  type MultipartOptions,
  type MultipartPart,
} from './multipart-types.ts';
export { readRawBody } from './raw.ts';
export { readStreamBody } from './stream.ts';
export { readTextBody } from './text.ts';

/** How to read one route's request body. */
export interface BodyOptions {
  kind: BodyKind;
  /** Largest body in bytes, counted while it streams in (413 beyond): `limits.bodyBytes`, or the route's `bodyLimit`. */
  limit: number;
  /** `raw` and `stream` only: the media types accepted (`type/*` wildcards allowed; 415 for others). Any when absent or empty. */
  mediaTypes?: readonly string[];
  /** `form` only: its field count limit. */
  form?: FormLimits;
  /** `multipart` only: its limits, and whether to read it whole into memory. */
  multipart?: MultipartOptions;
}

/** What `readBody` gives for each kind (`multipart` with `buffer: true` gives a `BufferedMultipart`). */
export interface BodyValues {
  json: unknown;
  text: string | undefined;
  raw: Buffer | undefined;
  form: FormBody | undefined;
  multipart: MultipartBody | BufferedMultipart;
  stream: Readable;
}

/**
 * Reads a request body as its route declares it; what it resolves to becomes `ctx.body`:
 *
 * | kind | media types | value | without a body |
 * | --- | --- | --- | --- |
 * | `json` | `application/json`, `*\/*+json`, UTF-8 | the parsed value | `undefined` |
 * | `text` | `text/*` | a string, decoded per `charset` (UTF-8 by default), strictly | `undefined` |
 * | `raw` | any (or `mediaTypes`) | a Buffer of the exact bytes | `undefined` |
 * | `form` | `application/x-www-form-urlencoded`, UTF-8 | `{ name: value \| values[] }` | `undefined` |
 * | `multipart` | `multipart/form-data` with a boundary | a `MultipartBody` (parts as they stream in), or a `BufferedMultipart` with `buffer: true` | no part |
 * | `stream` | any (or `mediaTypes`) | a Readable, counted against the limit | an ended stream |
 *
 * Errors are `KError`s: 415 for another media type or charset, or a
 * malformed `Content-Type` (with `Accept-Post`), 413 past a limit (with
 * `Connection: close`; a declared `Content-Length` above the limit is
 * refused before reading), 400 for a malformed body, a forbidden key or
 * bytes that are not UTF-8 (`INVALID_UTF8`, for json, UTF-8 text and
 * forms), 503 when `signal` aborts first. The streaming kinds resolve
 * once the request's head is checked; their later errors come out of the
 * stream or the iteration. The request is paused, never destroyed, on an
 * error, so that the problem response can still be sent.
 */
export async function readBody(req: IncomingMessage, options: BodyOptions, signal?: AbortSignal): Promise<unknown> {
  const { limit } = options;
  const mediaTypes = options.mediaTypes !== undefined && options.mediaTypes.length > 0 ? options.mediaTypes : undefined;
  switch (options.kind) {
    case 'json':
      return readJsonBody(req, limit, signal);
    case 'text':
      return readTextBody(req, limit, signal);
    case 'raw':
      return readRawBody(req, limit, signal, mediaTypes);
    case 'form':
      return readFormBody(req, limit, signal, options.form);
    case 'multipart':
      return options.multipart?.buffer === true
        ? readBufferedMultipartBody(req, limit, signal, options.multipart)
        : readMultipartBody(req, limit, signal, options.multipart);
    case 'stream':
      return readStreamBody(req, limit, signal, mediaTypes);
    default:
      throw new TypeError(`unknown body kind '${String(options.kind)}'`);
  }
}
