import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedConfig } from '../../config/types.ts';
import { normalizeOrigin } from './cross-origin.ts';

/**
 * The CORS step of an App whose `cors.origins` is not empty: applies the CORS headers to a response
 * and returns true when it answered a preflight request itself; `vary` adds `Origin` to the reply's
 * `Vary` again, for the pipeline to call when it writes the reply (a handler may have set a `Vary`
 * of its own meanwhile).
 */
export interface Cors {
  (req: IncomingMessage, res: ServerResponse): boolean;
  vary(res: ServerResponse): void;
}

const PREFLIGHT_VARY = ['Origin', 'Access-Control-Request-Method', 'Access-Control-Request-Headers'] as const;

/**
 * Builds the CORS step from the config; undefined when CORS is off (`origins` empty): no CORS
 * header, and no `Vary: Origin`, is sent then. When on, every reply says `Vary: Origin` (added to
 * the `Vary` it has, see {@link appendVary}); an origin that is not allowed gets no other CORS
 * header (the browser then blocks). Origins compare without case in scheme and host, as the CSRF
 * check compares them (`normalizeOrigin`); the port is part of the origin.
 *
 * @example
 * const cors = createCors(config.cors);
 * if (cors?.(req, res)) return res.writeHead(204).end(); // a preflight
 */
export function createCors(config: ResolvedConfig['cors']): Cors | undefined {
  if (config.origins.length === 0) return undefined;
  const any = config.origins.includes('*');
  const allowed = new Set(config.origins.map(normalizeOrigin));
  const methods = config.methods.join(', ');
  const allowedHeaders = config.allowedHeaders.join(', ');
  const exposed = config.exposedHeaders.join(', ');
  const maxAge = String(config.maxAge);

  const cors = (req: IncomingMessage, res: ServerResponse): boolean => {
    appendVary(res, 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !(any || allowed.has(origin.toLowerCase()))) return false;
    res.setHeader('Access-Control-Allow-Origin', any && !config.credentials ? '*' : origin);
    if (config.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
    const requestedMethod = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || requestedMethod === undefined) {
      if (exposed !== '') res.setHeader('Access-Control-Expose-Headers', exposed);
      return false;
    }
    appendVary(res, ...PREFLIGHT_VARY);
    res.setHeader('Access-Control-Allow-Methods', methods);
    const requestedHeaders = req.headers['access-control-request-headers'];
    const headers = allowedHeaders !== '' ? allowedHeaders : requestedHeaders;
    if (headers !== undefined && headers !== '') res.setHeader('Access-Control-Allow-Headers', headers);
    res.setHeader('Access-Control-Max-Age', maxAge);
    return true;
  };
  return Object.assign(cors, { vary: (res: ServerResponse) => appendVary(res, 'Origin') });
}

/**
 * Adds header names to a reply's `Vary`, after those it has: a name it lists already (in any case),
 * or a `Vary: *`, is left as it is; nothing is replaced, nothing repeated. A no-op once the head is
 * sent.
 *
 * @example
 * appendVary(res, 'Origin'); // Vary: Accept-Encoding → Vary: Accept-Encoding, Origin
 */
export function appendVary(res: ServerResponse, ...names: readonly string[]): void {
  if (res.headersSent) return;
  const header = res.getHeader('vary');
  const current = header === undefined ? '' : Array.isArray(header) ? header.join(', ') : String(header);
  const listed = current
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (listed.includes('*')) return;
  const added = names.filter((name) => !listed.includes(name.toLowerCase()));
  if (added.length === 0) return;
  res.setHeader('Vary', [...(listed.length === 0 ? [] : [current.trim()]), ...added].join(', '));
}
