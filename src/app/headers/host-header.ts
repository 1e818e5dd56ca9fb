import type { IncomingMessage } from 'node:http';
import { KError } from '../../errors/k-error.ts';

/**
 * An HTTP/1.1 request has exactly one Host header (RFC 9112 §3.2); node:http alone would keep the
 * first of several. A step of every request (see `PipelineSteps.arrival`): a 400 that closes the
 * connection otherwise.
 *
 * @example
 * checkHost(ctx); // throws for `Host: a` + `Host: b`
 */
export function checkHost(request: { readonly req: IncomingMessage }): void {
  const req = request.req;
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts === 1 || (hosts === 0 && req.httpVersion !== '1.1')) return;
  const problem = hosts === 0 ? 'the Host header is missing' : 'the Host header is repeated';
  throw KError.badRequest(problem, { headers: { Connection: 'close' } });
}
