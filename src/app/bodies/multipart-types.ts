import type { Readable } from 'node:stream';
import type { FormBody } from './form.ts';

/** What a multipart body gives a handler, and its limits (see multipart.ts). */

/** Limits of a multipart body, on top of the body's own byte limit; each one exceeded is a 413. */
export interface MultipartLimits {
  /** Most file parts; default 10. */
  files?: number;
  /** Largest file, in bytes; default the body's limit. */
  fileBytes?: number;
  /** Most non-file fields; default 100. */
  fields?: number;
  /** Largest field value, in bytes; default 64 KiB. */
  fieldBytes?: number;
}

export interface MultipartOptions extends MultipartLimits {
  /** Read the whole body into memory (`BufferedMultipart`) instead of handing its parts over as they stream in. */
  buffer?: boolean;
}

/** The defaults of `MultipartLimits` (`fileBytes` defaults to the body's limit). */
export const MULTIPART_DEFAULTS = { files: 10, fields: 100, fieldBytes: 64 * 1024 } as const;

/** A non-file part of a multipart body. */
export interface MultipartField {
  kind: 'field';
  name: string;
  value: string;
  /** The part's `Content-Type` (`text/plain` when it has none). */
  mimeType: string;
}

/** A file part: its content streams in as `stream` is read. */
export interface MultipartFile {
  kind: 'file';
  name: string;
  /** The file's name without any directory ('' for a part sent as `application/octet-stream` without one). */
  filename: string;
  mimeType: string;
  /**
   * The file's bytes. Read it (or destroy it) before asking for the next
   * part: asking drains what is left of it. It errors with a 413 `KError`
   * past `fileBytes` or the body's limit, a 400 when the body is cut short.
   */
  stream: Readable;
}

export type MultipartPart = MultipartField | MultipartFile;

/**
 * The parts of a multipart body, in order, as they arrive: iterate with
 * `for await`. A body that breaks a limit, is malformed or is cut short makes
 * the iteration throw the `KError` (413 or 400). Leaving the loop early stops
 * reading the request (the connection closes after the response).
 *
 * @example
 * for await (const part of body) {
 *   if (part.kind === 'file') await pipeline(part.stream, createWriteStream(join(dir, randomUUID())));
 *   else fields[part.name] = part.value;
 * }
 */
export type MultipartBody = AsyncIterableIterator<MultipartPart, undefined>;

/** A file of a buffered multipart body. */
export interface BufferedFile {
  name: string;
  filename: string;
  mimeType: string;
  data: Buffer;
}

/** A multipart body read in full: its fields as a form's (a repeated name → an array), its files in order. */
export interface BufferedMultipart {
  fields: FormBody;
  files: BufferedFile[];
}
