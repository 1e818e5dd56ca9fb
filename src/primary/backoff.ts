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
 * for `stableAfterMs`. Also detects a crash loop: `crashLoopFailures` boot
 * failures within `crashLoopWindowMs`. Only boot failures make a crash loop
 * (gunicorn's rule: it never gives up on a worker that booted): a worker that
 * died before it listened (a start-up timeout, a failed fork with nothing up),
 * or listened and died younger than `stableAfterMs` without having received a
 * single request. A worker that received requests and then died never counts,
 * however young it was: one crashing request sent again and again must not stop
 * the service. Its replacement still waits for the growing delay, so a storm of
 * such requests cannot fork-bomb the host.
 *
 * @example
 * const backoff = new Backoff(backoffPolicyOf(config.cluster));
 * const { delayMs, crashLoop } = backoff.fail(Date.now(), upForMs, receivedRequests);
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

  /**
   * Records a failure at `now` of a worker that had been up for `upForMs` (0 if it never came up) and
   * had, or had not, received requests.
   */
  fail(now: number, upForMs: number, receivedRequests = false): { delayMs: number; crashLoop: boolean } {
    const { initialMs, maxMs, stableAfterMs, crashLoopFailures, crashLoopWindowMs } = this.#policy;
    const stable = upForMs >= stableAfterMs;
    const bootFailure = !stable && !receivedRequests;
    if (stable) this.#consecutive = 0;
    this.#consecutive++;
    this.#failures = this.#failures.filter((t) => now - t < crashLoopWindowMs);
    if (bootFailure) this.#failures.push(now);
    const exponential = Math.min(maxMs, initialMs * 2 ** Math.min(this.#consecutive - 1, 30));
    const delayMs = Math.round(exponential * (0.5 + this.#random() / 2));
    return { delayMs, crashLoop: bootFailure && this.#failures.length >= crashLoopFailures };
  }
}
