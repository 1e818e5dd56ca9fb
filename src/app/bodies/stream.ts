import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { KError } from '../../errors/k-error.ts';
import { abandoned, checkDeclaredLength, hasBody, tooLarge, unreadable } from './common.ts';
import { checkMediaTypes } from './kinds.ts';

/**
 * The request body as a stream for the handler to consume (pipe it to a file,
 * a hash, an upstream), its bytes counted as they pass: past `limit` the
 * stream errors with a 413 `KError` (and the request is paused, never
 * destroyed, so that the 413 can be sent); a client that aborts makes it error
 * with a 400 `KError`. Any media type, unless `mediaTypes` narrows them (415
 * for the others, before anything is read). A request without a body gives a
 * stream that ends at once. Destroying the stream stops reading the request.
 *
 * @example
 * await pipeline(readStreamBody(req, 50 << 20), createWriteStream(path));
 */
export function readStreamBody(req: IncomingMessage, limit: number, signal?: AbortSignal, mediaTypes?: readonly string[]): Readable {
  if (!hasBody(req)) return Readable.from([]);
  if (mediaTypes !== undefined) checkMediaTypes(req.headers['content-type'], mediaTypes);
  checkDeclaredLength(req, limit);
  let size = 0;
  let attached = true;
  const detach = () => {
    if (!attached) return;
    attached = false;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
    signal?.removeEventListener('abort', onAbort);
  };
  const fail = (error: KError) => {
    detach();
    req.pause();
    out.destroy(error);
  };
  const out = new Readable({
    read() {
      if (attached) req.resume();
    },
    destroy(error, callback) {
      // the consumer gave up (or the body failed): stop reading; the response closes the connection
      if (attached) {
        detach();
        req.pause();
      }
      callback(error);
    },
  });
  // an error nobody listens for would be thrown: the handler may never read the stream
  out.on('error', () => {});
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      fail(tooLarge(limit));
      return;
    }
    if (!out.push(chunk)) req.pause();
  };
  const onEnd = () => {
    detach();
    out.push(null);
  };
  const onError = (error: Error) => fail(unreadable(error));
  const onAborted = () => fail(unreadable(new Error('request aborted')));
  const onAbort = () => fail(abandoned(signal as AbortSignal));
  if (signal?.aborted) {
    req.pause();
    out.destroy(abandoned(signal));
    return out;
  }
  req.pause();
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
  signal?.addEventListener('abort', onAbort, { once: true });
  return out;
}
