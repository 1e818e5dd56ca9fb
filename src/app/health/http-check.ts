import type { Agent } from 'undici';
import type { HealthChecker } from '../core/registrar.ts';

export interface HttpCheckOptions {
  /** The checker's name in `/health` (default: the URL's host). */
  name?: string;
  /** Default `GET`. */
  method?: 'GET' | 'HEAD';
  /** Statuses that mean healthy (default: any 2xx). */
  expectStatus?: readonly number[];
  /** Extra request headers (an API key, say). */
  headers?: Record<string, string>;
}

/** undici, loaded by the first check: an App that never checks an HTTP dependency never loads it. */
let undici: Promise<typeof import('undici')> | undefined;
/** One connection pool for every HTTP check of the process: a check runs every few seconds at most. */
let agent: Agent | undefined;

/**
 * A {@link HealthChecker} for an HTTP dependency: it passes when a request to
 * `url` answers with an expected status. The request goes through undici on
 * a shared keep-alive pool, is aborted by the checker's signal (so
 * `health.timeoutMs` bounds it), and its body is discarded.
 *
 * @example
 * app.registerHealthChecker(httpCheck('http://payments.internal/health', { name: 'payments' }));
 */
export function httpCheck(url: string | URL, options: HttpCheckOptions = {}): HealthChecker {
  const target = new URL(url);
  const expected = options.expectStatus;
  return {
    name: options.name ?? target.host,
    async check(signal: AbortSignal): Promise<void> {
      undici ??= import('undici');
      const { Agent, request } = await undici;
      agent ??= new Agent({ connections: 4, keepAliveTimeout: 10_000 });
      const response = await request(target, {
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        signal,
        dispatcher: agent,
      });
      await response.body.dump();
      const { statusCode } = response;
      const ok = expected === undefined ? statusCode >= 200 && statusCode < 300 : expected.includes(statusCode);
      if (!ok) throw new Error(`${target.origin}${target.pathname} answered ${statusCode}`);
    },
  };
}
