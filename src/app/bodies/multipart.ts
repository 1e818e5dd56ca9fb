import type { IncomingMessage } from 'node:http';
import { KError } from '../../errors/k-error.ts';
import { checkDeclaredLength, forbiddenFieldName, forbiddenKey, hasBody, mediaTypeOf, unsupported } from './common.ts';
import type { FormBody } from './form.ts';
import { MULTIPART_TYPE, MultipartReader } from './multipart-parts.ts';
import type { BufferedFile, BufferedMultipart, MultipartBody, MultipartLimits } from './multipart-types.ts';

/** RFC 2046 §5.1.1: 1 to 70 characters, not ending in a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
const ACCEPTED = [MULTIPART_TYPE];

/**
 * Reads a `multipart/form-data` body as it streams in (see `MultipartBody`),
 * with @fastify/busboy. Checked at once: the media type (415, as for a
 * malformed `Content-Type`), a boundary as
 * RFC 2046 allows (400), a declared `Content-Length` above `limit` (413).
 * A request without a body gives no part.
 */
export function readMultipartBody(req: IncomingMessage, limit: number, signal?: AbortSignal, options: MultipartLimits = {}): MultipartBody {
  if (!hasBody(req)) return new MultipartReader(undefined, limit, signal, options);
  const header = req.headers['content-type'];
  const { type, parameters } = mediaTypeOf(header, ACCEPTED);
  if (type !== MULTIPART_TYPE) throw unsupported(ACCEPTED, header);
  const boundary = parameters.boundary;
  if (boundary === undefined || !BOUNDARY.test(boundary)) {
    throw KError.badRequest('the multipart/form-data body has no valid boundary (1 to 70 characters as RFC 2046 allows)');
  }
  checkDeclaredLength(req, limit);
  return new MultipartReader({ req, boundary }, limit, signal, options);
}

/**
 * Reads a `multipart/form-data` body in full: fields as a form's (a name that
 * expands to `__proto__` or `constructor.prototype` is a 400, as in forms),
 * files into Buffers. Same checks and limits as `readMultipartBody`.
 */
export async function readBufferedMultipartBody(
  req: IncomingMessage,
  limit: number,
  signal?: AbortSignal,
  options: MultipartLimits = {},
): Promise<BufferedMultipart> {
  const parts = readMultipartBody(req, limit, signal, options);
  const fields: FormBody = {};
  const files: BufferedFile[] = [];
  try {
    for await (const part of parts) {
      if (forbiddenFieldName(part.name)) throw forbiddenKey();
      if (part.kind === 'file') {
        const chunks: Buffer[] = [];
        for await (const chunk of part.stream) chunks.push(chunk as Buffer);
        files.push({ name: part.name, filename: part.filename, mimeType: part.mimeType, data: Buffer.concat(chunks) });
        continue;
      }
      const seen = Object.hasOwn(fields, part.name) ? fields[part.name] : undefined;
      if (seen === undefined) fields[part.name] = part.value;
      else if (typeof seen === 'string') fields[part.name] = [seen, part.value];
      else seen.push(part.value);
    }
  } finally {
    await parts.return?.();
  }
  return { fields, files };
}
