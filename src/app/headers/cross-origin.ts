import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { ResolvedConfig } from '../../config/types.ts';
import { KError } from '../../errors/k-error.ts';

/** What the check needs of a request it applies to (`isUnsafe`, `isUpgradeRequest`): its headers and the host it was sent to (`ctx.host`). */
export type CrossOriginCheck = (headers: IncomingHttpHeaders, host: string) => boolean;

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The methods the check applies to: a browser sends the others (`GET`, `HEAD`, `OPTIONS`) without side effects. */
export function isUnsafe(method: string): boolean {
  return UNSAFE.has(method);
}

/**
 * Whether a request asks to upgrade its connection (a WebSocket's handshake, a `GET` with
 * `Upgrade` and `Connection: Upgrade`, which node:http hands to the server's `upgrade` listener):
 * the check applies to it as to an unsafe method, since the socket it opens carries the
 * browser's cookies and needs no CORS permission to read the answers.
 *
 * @example
 * if (isUnsafe(method) || isUpgradeRequest(req)) refuse(req.headers, host);
 */
export function isUpgradeRequest(req: IncomingMessage): boolean {
  // set by node:http's parser, true only for a request it gave to the `upgrade` listener
  return (req as IncomingMessage & { upgrade?: boolean }).upgrade === true;
}

/**
 * An origin as browsers serialise it (RFC 6454 §6.2): scheme and host in lower case, the port kept
 * unless it is the scheme's default (`HTTPS://App.Example:443` → `https://app.example`). What is
 * not an http(s) origin (`null`, junk) is only lower-cased. The CSRF check and CORS compare a
 * request's lower-cased `Origin` with origins normalised this way, once, when they are built.
 *
 * @example
 * normalizeOrigin('HTTPS://App.Example:8443'); // 'https://app.example:8443'
 */
export function normalizeOrigin(origin: string): string {
  if (!/^https?:\/\//i.test(origin)) return origin.toLowerCase();
  try {
    return new URL(origin).origin;
  } catch {
    return origin.toLowerCase();
  }
}

/**
 * Cross-site request forgery protection as browsers make it possible without tokens (the approach
 * of Go 1.25's `CrossOriginProtection`): an unsafe request (`POST`, `PUT`, `PATCH`, `DELETE`) or a
 * WebSocket upgrade is cross-origin when `Sec-Fetch-Site` says `same-site` or `cross-site`, or,
 * without it (older browsers), when `Origin` names another host than the request's; `same-origin`
 * and `none` (the user typed the URL, a bookmark) pass, and so does a request with neither header
 * (curl, a server: no browser, no ambient cookies to abuse). A cross-origin request from a trusted
 * origin passes (compared without case, see {@link normalizeOrigin}). Returns whether the request
 * is refused.
 *
 * @example
 * const refuse = crossOriginCheck(['https://admin.example']);
 * if (isUnsafe(method)) refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 'shop.example'); // true
 */
export function crossOriginCheck(trustedOrigins: readonly string[]): CrossOriginCheck {
  const trusted = new Set(trustedOrigins.map(normalizeOrigin));
  const fromTrusted = (origin: string | undefined) => origin !== undefined && trusted.has(origin.toLowerCase());
  return (headers, host) => {
    const origin = headers.origin;
    const site = headers['sec-fetch-site'];
    if (site !== undefined) return site !== 'same-origin' && site !== 'none' && !fromTrusted(origin);
    if (origin === undefined) return false;
    return hostOf(origin) !== host.toLowerCase() && !fromTrusted(origin);
  };
}

/** A request as the CSRF step reads it (the core's `Ctx` is one): `host` is the one the client asked for (a trusted proxy's). */
export interface CrossOriginRequest {
  readonly req: IncomingMessage;
  readonly method: string;
  readonly host: string;
}

/**
 * `csrf` as a step of every request (see `PipelineSteps.arrival`): an unsafe method, or an upgrade
 * (a WebSocket's handshake, refused before it completes), from another site is a 403
 * `CROSS_ORIGIN_REQUEST`, judged on the host the client asked for. The origins CORS allows are
 * trusted too. Undefined when `csrf.enabled` is false.
 *
 * @example
 * const csrf = csrfStep(config);
 * csrf?.(ctx); // throws for a cross-site POST
 */
export function csrfStep(config: Pick<ResolvedConfig, 'csrf' | 'cors'>): ((request: CrossOriginRequest) => void) | undefined {
  if (!config.csrf.enabled) return undefined;
  const refuse = crossOriginCheck([...config.csrf.trustedOrigins, ...config.cors.origins.filter((o) => o !== '*')]);
  return (request) => {
    const upgrade = isUpgradeRequest(request.req);
    if (!(upgrade || isUnsafe(request.method)) || !refuse(request.req.headers, request.host)) return;
    const what = upgrade ? 'a cross-origin WebSocket upgrade' : 'a cross-origin request';
    throw KError.of('CROSS_ORIGIN_REQUEST', `${what} from a browser: refused (csrf)`);
  };
}

/** The host (with its port) of an `Origin`: `https://shop.example:8443` → `shop.example:8443`; `null` and junk → ''. */
function hostOf(origin: string): string {
  const scheme = origin.indexOf('://');
  return scheme === -1 ? '' : origin.slice(scheme + 3).toLowerCase();
}
