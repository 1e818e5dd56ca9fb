import type { ServerResponse } from 'node:http';
import type { ResolvedConfig } from '../../config/types.ts';

/** A response header as `setHeader` takes it. */
export type HeaderPair = readonly [name: string, value: string];

/**
 * The security headers `securityHeaders` asks for, computed once when the App
 * is built: per request, writing them is a loop over this frozen list. Empty
 * when `securityHeaders.enabled` is false.
 *
 * @example
 * securityHeaderList(config.securityHeaders);
 * // [['X-Content-Type-Options', 'nosniff'], ['X-Frame-Options', 'DENY'], …]
 */
export function securityHeaderList(options: ResolvedConfig['securityHeaders']): readonly HeaderPair[] {
  const list: HeaderPair[] = [];
  if (!options.enabled) return Object.freeze(list);
  if (options.contentTypeOptions) list.push(['X-Content-Type-Options', 'nosniff']);
  if (options.frameOptions !== false) list.push(['X-Frame-Options', options.frameOptions]);
  if (options.contentSecurityPolicy !== '') list.push(['Content-Security-Policy', options.contentSecurityPolicy]);
  if (options.referrerPolicy !== false) list.push(['Referrer-Policy', options.referrerPolicy]);
  if (options.crossOriginResourcePolicy !== false) list.push(['Cross-Origin-Resource-Policy', options.crossOriginResourcePolicy]);
  if (options.strictTransportSecurity) {
    let value = `max-age=${options.hstsMaxAgeS}`;
    if (options.hstsIncludeSubDomains) value += '; includeSubDomains';
    if (options.hstsPreload) value += '; preload';
    list.push(['Strict-Transport-Security', value]);
  }
  for (const pair of list) Object.freeze(pair);
  return Object.freeze(list);
}

/**
 * Writes the headers on a response before anything else does, so that a route
 * (the docs page's CSP) or an error response may still replace them.
 *
 * @example
 * setSecurityHeaders(res, securityHeaderList(config.securityHeaders));
 */
export function setSecurityHeaders(res: ServerResponse, list: readonly HeaderPair[]): void {
  for (let i = 0; i < list.length; i++) {
    const pair = list[i]!;
    res.setHeader(pair[0], pair[1]);
  }
}

/**
 * The security headers as the first step of every request (see `PipelineSteps.arrival`), before
 * anything else is written; undefined when `securityHeaders` sets none.
 *
 * @example
 * const step = securityHeadersStep(config.securityHeaders);
 * step?.(ctx); // X-Content-Type-Options: nosniff, …
 */
export function securityHeadersStep(
  options: ResolvedConfig['securityHeaders'],
): ((request: { readonly res: ServerResponse }) => void) | undefined {
  const list = securityHeaderList(options);
  return list.length === 0 ? undefined : (request) => setSecurityHeaders(request.res, list);
}

/**
 * The same headers as raw head lines (`Name: value\r\n` each), for the answers written straight to a
 * socket: a malformed request's problem (`server.ts`) and the `OVERLOADED` 503 of a connection no
 * worker takes (`src/process/overloaded-reply.ts`).
 *
 * @example
 * socket.end(`HTTP/1.1 503 Service Unavailable\r\n${headerLines(list)}Content-Length: 0\r\n\r\n`);
 */
export function headerLines(list: readonly HeaderPair[]): string {
  let lines = '';
  for (const [name, value] of list) lines += `${name}: ${value}\r\n`;
  return lines;
}
