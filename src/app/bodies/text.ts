import type { IncomingMessage } from 'node:http';
import { TextDecoder } from 'node:util';
import { KError } from '../../errors/k-error.ts';
import { checkDeclaredLength, hasBody, isUtf8Charset, mediaTypeOf, readBytes, unsupported } from './common.ts';
import { decodeUtf8, invalidUtf8 } from './utf8.ts';

const ACCEPTED = ['text/*'];

/**
 * Reads a `text/*` body and decodes it per its `charset` parameter (UTF-8 when
 * there is none), with the WHATWG Encoding Standard's decoders and labels (so
 * `iso-8859-1` decodes as `windows-1252`, as browsers do). Another media type,
 * a malformed `Content-Type` or a charset no decoder knows is a 415; bytes
 * that are not valid in the charset are a 400 (`INVALID_UTF8` for UTF-8, the
 * default). A leading UTF-8 byte order mark is not part of the text.
 * `undefined` when the request has no body.
 */
export async function readTextBody(req: IncomingMessage, limit: number, signal?: AbortSignal): Promise<string | undefined> {
  if (!hasBody(req)) return undefined;
  const header = req.headers['content-type'];
  const { type, parameters } = mediaTypeOf(header, ACCEPTED);
  if (!type.startsWith('text/')) throw unsupported(ACCEPTED, header);
  const charset = parameters.charset;
  if (charset === undefined || isUtf8Charset(charset)) {
    checkDeclaredLength(req, limit);
    const text = decodeUtf8(await readBytes(req, limit, signal));
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    throw unsupported(['text/*; charset=utf-8'], header, `the charset '${charset.slice(0, 40)}' is not supported`);
  }
  checkDeclaredLength(req, limit);
  const bytes = await readBytes(req, limit, signal);
  try {
    return decoder.decode(bytes);
  } catch (error) {
    // another label of UTF-8 (`unicode-1-1-utf-8`) fails as UTF-8 does
    if (decoder.encoding === 'utf-8') throw invalidUtf8(bytes, 'the body', error);
    throw KError.badRequest(`the body is not valid ${decoder.encoding}`, { cause: error });
  }
}
