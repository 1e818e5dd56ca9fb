import type { IncomingMessage } from 'node:http';
import { TextDecoder } from 'node:util';
import { KError } from '../../errors/k-error.ts';
import { checkDeclaredLength, hasBody, parseMediaType, readBytes, unsupported } from './common.ts';

const ACCEPTED = ['text/*'];

/**
 * Reads a `text/*` body and decodes it per its `charset` parameter (UTF-8 when
 * there is none), with the WHATWG Encoding Standard's decoders and labels (so
 * `iso-8859-1` decodes as `windows-1252`, as browsers do). Another media type,
 * or a charset no decoder knows, is a 415; bytes that are not valid in the
 * charset are a 400. `undefined` when the request has no body.
 */
export async function readTextBody(req: IncomingMessage, limit: number, signal?: AbortSignal): Promise<string | undefined> {
  if (!hasBody(req)) return undefined;
  const header = req.headers['content-type'];
  const media = parseMediaType(header);
  if (media === undefined || !media.type.startsWith('text/')) throw unsupported(ACCEPTED, header);
  const charset = media.params.get('charset') ?? 'utf-8';
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
    throw KError.badRequest(`the body is not valid ${decoder.encoding}`, { cause: error });
  }
}
