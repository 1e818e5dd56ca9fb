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

/** A request as the CORS step reads it (the core's `Ctx` is one): `noContent` answers a preflight. */
export interface CorsRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  noContent(): void;
}

/**
 * CORS as a step of every request (see `PipelineSteps.arrival`): its headers applied, a preflight
 * answered 204 on the spot (no route is looked up), and `beforeReply`, which adds `Origin` to the
 * reply's `Vary` again as it is written (a handler may have set a `Vary` of its own since).
 * Undefined when CORS is off.
 *
 * @example
 * const cors = corsSteps(config.cors);
 * cors?.arrival(ctx); // ctx.reply is a 204 for a preflight
 */
export function corsSteps(
  config: ResolvedConfig['cors'],
): { arrival: (request: CorsRequest) => void; beforeReply: (res: ServerResponse) => void } | undefined {
  const cors = createCors(config);
  if (cors === undefined) return undefined;
  return {
    arrival: (request) => {
      if (cors(request.req, request.res)) request.noContent();
    },
    beforeReply: cors.vary,
  };
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
  // the common case, a reply without a Vary yet: nothing to read
  if (header === undefined || header === '') {
    res.setHeader('Vary', names.length === 1 ? (names[0] as string) : names.join(', '));
    return;
  }
  const current = Array.isArray(header) ? header.join(', ') : String(header);
  let value = current.trim();
  for (const name of names) {
    const found = listed(value, name);
    if (found === '*') return;
    if (!found) value = `${value}, ${name}`;
  }
  if (value !== current) res.setHeader('Vary', value);
}

/** Whether a `Vary` value lists `name` (in any case), or `'*'` when it is a `Vary: *`; no allocation but the tokens'. */
function listed(value: string, name: string): boolean | '*' {
  let start = 0;
  while (start <= value.length) {
    let end = value.indexOf(',', start);
    if (end === -1) end = value.length;
    const token = value.slice(start, end).trim();
    if (token === '*') return '*';
    if (token.length === name.length && token.toLowerCase() === name.toLowerCase()) return true;
    start = end + 1;
  }
  return false;
}
