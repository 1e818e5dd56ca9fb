import type { IncomingHttpHeaders } from 'node:http';

/** What the check needs of an unsafe request (`isUnsafe`): its headers and the host it was sent to (`ctx.host`). */
export type CrossOriginCheck = (headers: IncomingHttpHeaders, host: string) => boolean;

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The methods the check applies to: a browser sends the others (`GET`, `HEAD`, `OPTIONS`) without side effects. */
export function isUnsafe(method: string): boolean {
  return UNSAFE.has(method);
}

/**
 * Cross-site request forgery protection as browsers make it possible without tokens (the approach
 * of Go 1.25's `CrossOriginProtection`): an unsafe request (`POST`, `PUT`, `PATCH`, `DELETE`) is
 * cross-origin when `Sec-Fetch-Site` says `same-site` or `cross-site`, or, without it (older
 * browsers), when `Origin` names another host than the request's; `same-origin` and `none` (the
 * user typed the URL, a bookmark) pass, and so does a request with neither header (curl, a server:
 * no browser, no ambient cookies to abuse). A cross-origin request from a trusted origin passes.
 * Returns whether the request is refused.
 *
 * @example
 * const refuse = crossOriginCheck(['https://admin.example']);
 * if (isUnsafe(method)) refuse({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 'shop.example'); // true
 */
export function crossOriginCheck(trustedOrigins: readonly string[]): CrossOriginCheck {
  const trusted = new Set(trustedOrigins.map((origin) => origin.toLowerCase()));
  const fromTrusted = (origin: string | undefined) => origin !== undefined && trusted.has(origin.toLowerCase());
  return (headers, host) => {
    const origin = headers.origin;
    const site = headers['sec-fetch-site'];
    if (site !== undefined) return site !== 'same-origin' && site !== 'none' && !fromTrusted(origin);
    if (origin === undefined) return false;
    return hostOf(origin) !== host.toLowerCase() && !fromTrusted(origin);
  };
}

/** The host (with its port) of an `Origin`: `https://shop.example:8443` → `shop.example:8443`; `null` and junk → ''. */
function hostOf(origin: string): string {
  const scheme = origin.indexOf('://');
  return scheme === -1 ? '' : origin.slice(scheme + 3).toLowerCase();
}
