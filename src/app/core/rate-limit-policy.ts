import { createError, describeValue } from '../../errors/flotilla-error.ts';
import { ipPrefix } from '../../utils/ip-prefix.ts';
import type { Ctx } from './ctx.ts';

/**
 * A rate limit: at most `max` requests per key in each window of `windowMs`, counted by every worker
 * and, with `coordination.url`, every replica together. Given as the `rateLimit` option of a route,
 * a group (`app.group(prefix, { rateLimit })`) or the App (`new App({ rateLimit })`, or the YAML
 * file's `rateLimit` without `key`); the nearest applies, and `rateLimit: false` exempts a route or a
 * group. Routes under one group's (or the App's) limit share its budget.
 *
 * @example
 * defineRoute({ method: 'POST', path: '/login', rateLimit: { max: 5, windowMs: 60_000, onStoreError: 'closed' }, handler });
 * app.group('/api', { rateLimit: { max: 100, windowMs: 60_000, key: (ctx) => ctx.headers['x-api-key'] as string } });
 */
export interface RateLimitOptions {
  /** Requests admitted per key and window: a positive integer. */
  max: number;
  /** The window, in ms: a positive integer (a window starts with the first request of a key that has none running). */
  windowMs: number;
  /**
   * Whom a request is counted for (default: the client's address, `ctx.ip`, an IPv6 one by its
   * network: {@link clientAddress}). `undefined` exempts the request; a throw is a programming
   * error, answered 500.
   */
  key?: (ctx: Ctx) => string | undefined;
  /**
   * The prefix length, 1–128, by which the default key groups IPv6 clients (default 56: what a
   * provider hands one customer, so that a client cannot rotate through the addresses of its own
   * network; 64: one subnet; 128: each address alone). IPv4 clients count by their whole address.
   * Not used with a `key` of your own (which may call `clientAddress(ctx, bits)`).
   */
  ipv6Subnet?: number;
  /**
   * When the count cannot be had (the coordinator unreachable, the primary not answering in time):
   * `open` (the default) admits the request, `closed` answers 503 `UNAVAILABLE`.
   */
  onStoreError?: 'open' | 'closed';
  /**
   * Whether a request counts, told after its response (default: every request does). Each request
   * is counted as it arrives, so that requests running together cannot pass the limit together, and
   * taken back after its response when this returns false: `(status) => status >= 400` limits
   * failed logins only (express-rate-limit's `skipSuccessfulRequests`). A request cut off before its
   * response has the status 499.
   */
  countIf?: (status: number, ctx: Ctx) => boolean;
  /**
   * Where the limit is checked: `onRequest` (the default) before the `onRequest` hooks, the
   * validation and the body, so that a flood costs the least; `preHandler` after them, just before
   * the handler, so that `key` can read `ctx.body` (a login limited per account).
   */
  hook?: 'onRequest' | 'preHandler';
}

/** A validated rate limit, as the pipeline applies it. */
export interface RateLimitPolicy {
  /** The policy's name in the `RateLimit-Policy` and `RateLimit` headers, and its part of the counters' keys. */
  readonly name: string;
  readonly max: number;
  readonly windowMs: number;
  readonly key: (ctx: Ctx) => string | undefined;
  readonly onStoreError: 'open' | 'closed';
  readonly countIf: ((status: number, ctx: Ctx) => boolean) | undefined;
  readonly hook: 'onRequest' | 'preHandler';
}

/** The options a `rateLimit` object may have. */
const OPTIONS: readonly string[] = [
  'max',
  'windowMs',
  'key',
  'ipv6Subnet',
  'onStoreError',
  'countIf',
  'hook',
] satisfies (keyof RateLimitOptions)[];

/** The longest window: 24 days. */
export const MAX_WINDOW_MS = 86_400_000 * 24;

/** The IPv6 prefix length the default key groups clients by, when `ipv6Subnet` is not given. */
export const DEFAULT_IPV6_SUBNET = 56;

/**
 * The default key of a rate limit: the client's address (`ctx.ip`: the connection's, or behind a
 * proxy `trustProxy` believes, the one it forwarded; without `trustProxy`, every request through a
 * proxy has the proxy's). An IPv4 address counts whole (one mapped in IPv6, `::ffff:192.0.2.1`, as
 * the IPv4 address); an IPv6 address by its first `ipv6Subnet` bits (default 56), in one canonical
 * form (`2001:db8:1:ff00::/56`) whichever way it was written, so that every worker and replica
 * counts the same bucket.
 *
 * @example
 * rateLimit: { max: 100, windowMs: 60_000, key: (ctx) => (isInternal(ctx) ? undefined : clientAddress(ctx)) }
 * clientAddress(ctx, 64); // '2001:db8:1:ff42::/64' for the client 2001:db8:1:ff42::7
 */
export function clientAddress(ctx: Ctx, ipv6Subnet = DEFAULT_IPV6_SUBNET): string {
  return ctx.ip ? ipPrefix(ctx.ip, ipv6Subnet) : 'unknown';
}

/**
 * Validates a `rateLimit` option where it is given (a route, a group, the App): a policy, `false`
 * (none here, nor inherited), or `undefined` when not given. A bad option throws
 * `FLO_ERR_BAD_RATE_LIMIT` naming `owner` and the problem.
 *
 * @example
 * rateLimitPolicy({ max: 50, windowMs: 60_000 }, 'GET /books', "route 'GET /books'");
 */
export function rateLimitPolicy(option: unknown, name: string, owner: string): RateLimitPolicy | false | undefined {
  if (option === undefined || option === false) return option;
  const bad = (reason: string) => createError('FLO_ERR_BAD_RATE_LIMIT', { owner, reason });
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw bad(
      `rateLimit must be an object { max, windowMs, key?, ipv6Subnet?, onStoreError?, countIf?, hook? } or false, got ${describeValue(option)}`,
    );
  }
  const o = option as Record<string, unknown>;
  for (const field of Object.keys(o)) {
    if (!OPTIONS.includes(field)) throw bad(`unknown rateLimit option '${field}'`);
  }
  const { max, windowMs, key, ipv6Subnet, onStoreError, countIf, hook } = o;
  if (!Number.isSafeInteger(max) || (max as number) < 1) throw bad(`rateLimit.max must be a positive integer, got ${describeValue(max)}`);
  if (!Number.isSafeInteger(windowMs) || (windowMs as number) < 1 || (windowMs as number) > MAX_WINDOW_MS) {
    throw bad(`rateLimit.windowMs must be a positive integer of ms up to ${MAX_WINDOW_MS}, got ${describeValue(windowMs)}`);
  }
  if (key !== undefined && typeof key !== 'function') throw bad(`rateLimit.key must be a function of ctx, got ${describeValue(key)}`);
  if (ipv6Subnet !== undefined && (!Number.isSafeInteger(ipv6Subnet) || (ipv6Subnet as number) < 1 || (ipv6Subnet as number) > 128)) {
    throw bad(`rateLimit.ipv6Subnet must be an integer from 1 to 128, got ${describeValue(ipv6Subnet)}`);
  }
  if (onStoreError !== undefined && onStoreError !== 'open' && onStoreError !== 'closed') {
    throw bad(`rateLimit.onStoreError must be 'open' or 'closed', got ${describeValue(onStoreError)}`);
  }
  if (countIf !== undefined && typeof countIf !== 'function') {
    throw bad(`rateLimit.countIf must be a function of (status, ctx), got ${describeValue(countIf)}`);
  }
  if (hook !== undefined && hook !== 'onRequest' && hook !== 'preHandler') {
    throw bad(`rateLimit.hook must be 'onRequest' or 'preHandler', got ${describeValue(hook)}`);
  }
  return {
    name,
    max: max as number,
    windowMs: windowMs as number,
    key: (key as RateLimitPolicy['key'] | undefined) ?? defaultKey(ipv6Subnet as number | undefined),
    onStoreError: onStoreError ?? 'open',
    countIf: countIf as RateLimitPolicy['countIf'],
    hook: hook ?? 'onRequest',
  };
}

/** The default key for `ipv6Subnet`: {@link clientAddress} itself at the default prefix length. */
function defaultKey(ipv6Subnet: number | undefined): (ctx: Ctx) => string {
  if (ipv6Subnet === undefined || ipv6Subnet === DEFAULT_IPV6_SUBNET) return clientAddress;
  return (ctx) => clientAddress(ctx, ipv6Subnet);
}
