import type { ResolvedConfig } from '../config/types.ts';

/** Restart policy numbers (from the `cluster` config keys). */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  stableAfterMs: number;
  crashLoopFailures: number;
  crashLoopWindowMs: number;
}

/**
 * The policy the `cluster` config keys set.
 *
 * @example
 * new Backoff(backoffPolicyOf(config.cluster));
 */
export function backoffPolicyOf(c: ResolvedConfig['cluster']): BackoffPolicy {
  return {
    initialMs: c.backoffInitialMs,
    maxMs: c.backoffMaxMs,
    stableAfterMs: c.stableAfterMs,
    crashLoopFailures: c.crashLoopFailures,
    crashLoopWindowMs: c.crashLoopWindowMs,
  };
}

/**
 * Exponential restart delay with jitter, capped; reset once a worker stayed up
 * for `stableAfterMs`. Also detects a crash loop: `crashLoopFailures` early
 * failures within `crashLoopWindowMs`. Only a worker that died before it had
 * been up for `stableAfterMs` (boot failures and start-up timeouts included)
 * counts: a service that crashes on every 50th request after a stable start
 * is replaced for as long as it runs, and never makes the primary give up.
 */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #random: () => number;
  #failures: number[] = [];
  #consecutive = 0;

  constructor(policy: BackoffPolicy, random: () => number = Math.random) {
    this.#policy = policy;
    this.#random = random;
  }

  /** Records a failure at `now` of a worker that had been up for `upForMs` (0 if it never came up). */
  fail(now: number, upForMs: number): { delayMs: number; crashLoop: boolean } {
    const { initialMs, maxMs, stableAfterMs, crashLoopFailures, crashLoopWindowMs } = this.#policy;
    const stable = upForMs >= stableAfterMs;
    if (stable) this.#consecutive = 0;
    this.#consecutive++;
    this.#failures = this.#failures.filter((t) => now - t < crashLoopWindowMs);
    if (!stable) this.#failures.push(now);
    const exponential = Math.min(maxMs, initialMs * 2 ** Math.min(this.#consecutive - 1, 30));
    const delayMs = Math.round(exponential * (0.5 + this.#random() / 2));
    return { delayMs, crashLoop: !stable && this.#failures.length >= crashLoopFailures };
  }
}
