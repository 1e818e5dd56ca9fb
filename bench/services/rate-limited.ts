/**
 * The service of `bench/rate-limit-cost.ts`: the same tiny reply on a route without a rate limit
 * and on one with a limit so high that every request is admitted (each is counted all the same:
 * what a limited route costs when it admits), plus one that refuses every request after the first.
 */
import { defineService } from 'flotilla';

const reply = { ok: true };

export default defineService((app) => {
  app.registerController({
    routes: () => [
      { method: 'GET', path: '/open', handler: () => reply },
      { method: 'GET', path: '/limited', rateLimit: { max: Number.MAX_SAFE_INTEGER, windowMs: 3_600_000 }, handler: () => reply },
      { method: 'GET', path: '/refused', rateLimit: { max: 1, windowMs: 3_600_000 }, handler: () => reply },
    ],
  });
});
