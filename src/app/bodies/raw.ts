import type { IncomingMessage } from 'node:http';
import { checkDeclaredLength, hasBody, readBytes } from './common.ts';
import { checkMediaTypes } from './kinds.ts';

/**
 * Reads a body as the exact bytes received, whatever its media type (unless
 * `mediaTypes` narrows them: 415 for the others), e.g. to verify a webhook's
 * signature before trusting its JSON. `undefined` when the request has no body.
 *
 * @example
 * const body = (await readRawBody(req, 1 << 20)) ?? Buffer.alloc(0);
 * const expected = createHmac('sha256', secret).update(body).digest();
 * const given = Buffer.from(String(req.headers['x-signature']), 'hex');
 * if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw KError.unauthorized('bad signature');
 * const event = JSON.parse(body.toString('utf8')); // trusted only now
 */
export async function readRawBody(
  req: IncomingMessage,
  limit: number,
  signal?: AbortSignal,
  mediaTypes?: readonly string[],
): Promise<Buffer | undefined> {
  if (!hasBody(req)) return undefined;
  if (mediaTypes !== undefined) checkMediaTypes(req.headers['content-type'], mediaTypes);
  checkDeclaredLength(req, limit);
  return readBytes(req, limit, signal);
}
