import { timingSafeEqual } from 'node:crypto';
import { KError, type Middleware } from 'flotilla';

/** Adds `Server-Timing: app;dur=<ms>` to every response of the group. */
export const serverTiming: Middleware = async (ctx, next) => {
  const started = performance.now();
  try {
    await next();
  } finally {
    ctx.setHeader('Server-Timing', `app;dur=${(performance.now() - started).toFixed(2)}`);
  }
};

/** Rejects requests without the right `X-Api-Key` with a 401 problem. */
export function requireApiKey(expected: string): Middleware {
  const want = Buffer.from(expected);
  return async (ctx, next) => {
    const given = Buffer.from(String(ctx.headers['x-api-key'] ?? ''));
    if (given.length !== want.length || !timingSafeEqual(given, want)) {
      throw KError.unauthorized('a valid X-Api-Key header is required', { headers: { 'WWW-Authenticate': 'ApiKey' } });
    }
    await next();
  };
}
