import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedConfig } from '../../config/types.ts';

/** Applies CORS headers to a response; returns true when it answered a preflight request itself. */
export type Cors = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * Builds the CORS step from the config. `Vary: Origin` is always sent; an
 * origin that is not allowed gets no CORS headers (the browser then blocks).
 */
export function createCors(config: ResolvedConfig['cors']): Cors {
  const any = config.origins.includes('*');
  const allowed = new Set(config.origins);
  const methods = config.methods.join(', ');
  const allowedHeaders = config.allowedHeaders.join(', ');
  const exposed = config.exposedHeaders.join(', ');
  const maxAge = String(config.maxAge);
  const enabled = config.origins.length > 0;

  return (req, res) => {
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (!enabled || origin === undefined || !(any || allowed.has(origin))) return false;
    res.setHeader('Access-Control-Allow-Origin', any && !config.credentials ? '*' : origin);
    if (config.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
    const requestedMethod = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || requestedMethod === undefined) {
      if (exposed !== '') res.setHeader('Access-Control-Expose-Headers', exposed);
      return false;
    }
    res.setHeader('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    res.setHeader('Access-Control-Allow-Methods', methods);
    const requestedHeaders = req.headers['access-control-request-headers'];
    const headers = allowedHeaders !== '' ? allowedHeaders : requestedHeaders;
    if (headers !== undefined && headers !== '') res.setHeader('Access-Control-Allow-Headers', headers);
    res.setHeader('Access-Control-Max-Age', maxAge);
    return true;
  };
}
