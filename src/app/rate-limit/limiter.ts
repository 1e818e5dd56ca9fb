import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { CounterStore, WindowCount } from '../../coordination/counter-store.ts';
import { describeValue } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import type { Ctx } from '../core/ctx.ts';
import type { RateLimitPolicy } from '../core/rate-limit-policy.ts';
import type { RouteLimit } from '../core/router.ts';
import { policyHeader, rateLimitHeader, resetSeconds, sfString } from './headers.ts';

/** What the limits of one App share. */
export interface LimiterHost {
  /** Where the counts are kept (created on the first limited route). */
  readonly store: CounterStore;
  /** `flotilla_rate_limit_requests_total`; undefined without metrics. */
  readonly counter: Counter<'route' | 'result'> | undefined;
  readonly logger: Logger;
}

/** A store's failures are logged at most this often per route (each is counted). */
const LOG_FAILURE_EVERY_MS = 10_000;
/** Keys longer than this are hashed (SHA-256) before they reach the store: an IPC message, a Redis key. */
const MAX_KEY_LENGTH = 256;

/**
 * The {@link RouteLimit} of `policy` on the route `route` (its template: the metric's label).
 *
 * @example
 * entry.limit = routeLimit(policy, '/books/:id', { store, counter, logger });
 */
export function routeLimit(policy: RateLimitPolicy, route: string, host: LimiterHost): RouteLimit {
  const { max, windowMs, key: keyOf } = policy;
  const prefix = `${policy.name}|${windowMs}|`;
  const policyField = policyHeader(policy);
  const name = sfString(policy.name);
  // bound once (no label hashing per request), and started at 0 so that rates are defined from the start
  const counted = (result: string) => {
    const child = host.counter?.labels({ route, result });
    child?.inc(0);
    return child;
  };
  const allowed = counted('allowed');
  const limited = counted('limited');
  const failure = counted(policy.onStoreError === 'open' ? 'failed-open' : 'failed-closed');
  let loggedAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;

  const countIf = policy.countIf;
  /** With `countIf`: after the response, the request is taken back from its window unless it counts. */
  const settle = (ctx: Ctx, storeKey: string, hit: WindowCount): void => {
    const counted = performance.now();
    ctx.res.once('close', () => {
      const status = ctx.res.headersSent ? ctx.res.statusCode : 499;
      let counts: boolean;
      try {
        counts = countIf?.(status, ctx) !== false;
      } catch (error) {
        host.logger.error({ err: error, route }, 'rateLimit.countIf threw: the request stays counted');
        return;
      }
      // its window has ended: the count it was in is gone
      if (counts || performance.now() - counted >= hit.resetMs) return;
      try {
        const released = host.store.release(storeKey);
        if (released instanceof Promise) released.catch(failedRelease);
      } catch (error) {
        failedRelease(error);
      }
    });
  };
  const failedRelease = (error: unknown): void => {
    host.logger.debug({ err: error, route }, 'a request countIf does not count could not be taken back: it stays counted');
  };
  const decide = (ctx: Ctx, hit: WindowCount, storeKey: string): void => {
    if (countIf !== undefined) settle(ctx, storeKey, hit);
    const remaining = Math.max(0, max - hit.count);
    if (hit.count <= max) {
      allowed?.inc();
      // ignored once a handler timeout answered while the count was awaited
      ctx.setHeader('RateLimit-Policy', policyField).setHeader('RateLimit', rateLimitHeader(name, remaining, hit.resetMs));
      return;
    }
    limited?.inc();
    const seconds = resetSeconds(hit.resetMs);
    throw KError.of('RATE_LIMITED', `more than ${max} requests in ${windowMs} ms: retry in ${seconds} s`, {
      headers: {
        'Retry-After': String(seconds),
        'RateLimit-Policy': policyField,
        RateLimit: rateLimitHeader(name, 0, hit.resetMs),
      },
    });
  };
  const failed = (error: unknown): void => {
    failure?.inc();
    unlogged++;
    const now = performance.now();
    if (now - loggedAt >= LOG_FAILURE_EVERY_MS) {
      loggedAt = now;
      host.logger.warn(
        { err: error, route, failures: unlogged, onStoreError: policy.onStoreError },
        policy.onStoreError === 'open'
          ? 'rate limit not counted: the store failed, requests are admitted'
          : 'rate limit not counted: the store failed, requests are answered 503',
      );
      unlogged = 0;
    }
    if (policy.onStoreError === 'closed') {
      throw KError.of('UNAVAILABLE', 'the rate limit cannot be checked now: retry later', { headers: { 'Retry-After': '1' } });
    }
  };

  return (ctx) => {
    const key = keyOf(ctx);
    if (key === undefined) return;
    if (typeof key !== 'string') {
      throw new TypeError(`the rateLimit key of route ${route} returned ${describeValue(key)}: expected a string, or undefined to exempt`);
    }
    const counter = storeKey(prefix, key);
    let hit: WindowCount | Promise<WindowCount>;
    try {
      hit = host.store.hit(counter, windowMs);
    } catch (error) {
      failed(error);
      return;
    }
    if (!(hit instanceof Promise)) {
      decide(ctx, hit, counter);
      return;
    }
    return hit.then((h) => decide(ctx, h, counter), failed);
  };
}

function storeKey(prefix: string, key: string): string {
  const full = prefix + key;
  return full.length <= MAX_KEY_LENGTH ? full : `${prefix}sha256:${createHash('sha256').update(key).digest('base64url')}`;
}
