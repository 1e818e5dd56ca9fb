import type { PongMessage } from '../ipc/protocol.ts';

/** When a healthy worker is replaced anyway (`cluster.maxMemoryMB`, `cluster.maxRequests`, `cluster.maxRequestsJitter`; 0 = off). */
export interface RecyclePolicy {
  maxMemoryMB: number;
  maxRequests: number;
  maxRequestsJitter: number;
}

export type RecycleReason = 'memory' | 'max-requests';

/** Heartbeats in a row above `maxMemoryMB` before a worker is recycled: one spike of garbage is not growth. */
export const MEMORY_STRIKES = 3;

interface State {
  limit: number;
  strikes: number;
}

/**
 * Decides, from each heartbeat's vital signs, when a worker has grown too big
 * (RSS above `maxMemoryMB` for {@link MEMORY_STRIKES} heartbeats in a row) or
 * has served its `maxRequests` (plus its own random share of the jitter, drawn
 * once per worker, so that workers started together do not recycle together).
 * It only decides; the supervisor replaces the worker gracefully.
 *
 * @example
 * const recycling = new Recycling({ maxMemoryMB: 512, maxRequests: 10_000, maxRequestsJitter: 1_000 });
 * recycling.check(worker, vitals); // 'memory' | 'max-requests' | undefined
 */
export class Recycling<W extends object> {
  readonly #policy: RecyclePolicy;
  readonly #random: () => number;
  readonly #state = new WeakMap<W, State>();

  constructor(policy: RecyclePolicy, random: () => number = Math.random) {
    this.#policy = policy;
    this.#random = random;
  }

  get enabled(): boolean {
    return this.#policy.maxMemoryMB > 0 || this.#policy.maxRequests > 0;
  }

  /** The request count at which this worker is recycled (Infinity when off). */
  limitOf(worker: W): number {
    return this.#stateOf(worker).limit;
  }

  /** The reason to recycle the worker now, if any; once it returned one, it returns none again for that worker. */
  check(worker: W, vitals: Pick<PongMessage, 'rss' | 'requests'>): RecycleReason | undefined {
    const state = this.#stateOf(worker);
    if (state.strikes < 0) return undefined;
    const { maxMemoryMB } = this.#policy;
    state.strikes = maxMemoryMB > 0 && vitals.rss > maxMemoryMB * 1_048_576 ? state.strikes + 1 : 0;
    const reason = state.strikes >= MEMORY_STRIKES ? 'memory' : vitals.requests >= state.limit ? 'max-requests' : undefined;
    if (reason !== undefined) state.strikes = -1;
    return reason;
  }

  #stateOf(worker: W): State {
    let state = this.#state.get(worker);
    if (state === undefined) {
      const { maxRequests, maxRequestsJitter } = this.#policy;
      const limit = maxRequests > 0 ? maxRequests + Math.floor(this.#random() * (maxRequestsJitter + 1)) : Number.POSITIVE_INFINITY;
      state = { limit, strikes: 0 };
      this.#state.set(worker, state);
    }
    return state;
  }
}
