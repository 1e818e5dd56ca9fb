import type { Logger } from 'pino';
import type { WindowCount } from './counter-store.ts';
import type { StoredSession } from './session-store.ts';

/**
 * What one backend of `coordination.url` does (ARCHITECTURE.md, "Coordination"): claims of cron
 * fires, and the service's lease. `redis.ts` and `postgres.ts` implement it on their clients,
 * whose own reconnection they use; nothing here speaks a wire protocol.
 */
export interface Coordinator {
  /** `redis` or `postgres`: the `backend` label of the metrics. */
  readonly backend: string;
  /**
   * Claims the fire `key` (`${job}:${ISO time}`, see `fireTimeOf`): `true` for the first claim
   * of the key, `false` for the others. Accepted only while the coordinator's clock is within
   * `ttlMs / 2` of the fire time (else rejects with a {@link ClockSkewError}); the claim is kept
   * `ttlMs`. Rejects when the coordinator does not answer within the timeout.
   */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Takes the service's lease when nobody holds it: a new fencing token, greater than every earlier one. */
  acquireLease(): Promise<LeaseAttempt>;
  /** Extends the lease this replica holds: `false` when it is no longer this replica's. */
  renewLease(): Promise<boolean>;
  /** Gives the lease up at once (after the schedulers stopped), so that another replica can take it. */
  releaseLease(): Promise<void>;
  /**
   * Counts one request of a rate limit for `key` in its fixed window of `windowMs` (see `CounterStore`),
   * atomically at the coordinator, so that every replica counts in the same window.
   */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** Takes one request back from `key`'s window while it runs (see `CounterStore.release`). */
  release(key: string): Promise<void>;
  /** The session `id` (its JSON and the ms it has left), `undefined` when there is none or it expired (see `SessionStore`). */
  getSession(id: string): Promise<StoredSession | undefined>;
  /** Keeps the session `id`'s JSON for `ttlMs` from now. */
  setSession(id: string, data: string, ttlMs: number): Promise<void>;
  /** Removes the session `id`. */
  deleteSession(id: string): Promise<void>;
  /** One exchange with the coordinator, to follow its reachability while nothing else is asked. */
  ping(): Promise<void>;
  /**
   * Sends `message` to every replica that `listen`s (this one included): `app.publish` across
   * replicas. At most once: a message sent while the coordinator is unreachable is lost (rejects).
   * Each replica's messages arrive in the order it sent them.
   */
  broadcast(message: string): Promise<void>;
  /** Calls `onMessage` with every replica's broadcasts from now on; resolves once listening (or after the first attempt, retrying after). */
  listen(onMessage: (message: string) => void): Promise<void>;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** The outcome of one attempt to take the lease: held with its fencing token, or when to try again. */
export type LeaseAttempt = { held: true; token: number } | { held: false; retryInMs: number };

/** What a backend is built from. */
export interface CoordinatorOptions {
  readonly url: string;
  /** The namespace of keys and rows: the service's name. */
  readonly service: string;
  /** This replica's name in the coordinator (host, pid and a random part): who holds the lease, who claimed a fire. */
  readonly holder: string;
  readonly timeoutMs: number;
  readonly leaseTtlMs: number;
  readonly leaseRenewMs: number;
  readonly link: Link;
  readonly logger: Logger;
}

/**
 * A claim refused because the replica's clock (the fire time it computed) is too far from the
 * coordinator's: the fire is skipped with reason `clock-skew`.
 */
export class ClockSkewError extends Error {
  readonly reason = 'clock-skew';
  /** The coordinator's time minus the fire time, in ms. */
  readonly skewMs: number;

  constructor(key: string, skewMs: number, maxMs: number) {
    super(
      `fire ${key}: the coordinator's clock is ${skewMs} ms from its time, more than the ${maxMs} ms allowed (coordination.maxClockSkewMs)`,
    );
    this.skewMs = skewMs;
  }
}

const FIRE_KEY = /^(.+):(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/;

/**
 * The job and the scheduled time (epoch ms) of a fire key, node-cron's `${name}:${slot.toISOString()}`.
 *
 * @example
 * fireTimeOf('report:2026-05-20T06:00:00.000Z'); // { job: 'report', at: 1779256800000 }
 */
export function fireTimeOf(key: string): { job: string; at: number } {
  const match = FIRE_KEY.exec(key);
  const at = match === null ? Number.NaN : Date.parse(match[2] ?? '');
  if (match === null || Number.isNaN(at)) throw new Error(`not a fire key (expected "<job>:<ISO 8601 time>"): ${JSON.stringify(key)}`);
  return { job: match[1] ?? '', at };
}

/**
 * What may be logged of a client's error: its class, message and code. Client errors can carry
 * the client itself (`pg` attaches it to an idle connection's error), connection parameters included.
 *
 * @example
 * logger.warn({ error: describeError(error) }, 'claim failed');
 */
export function describeError(error: unknown): { type: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { type: error.constructor.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) };
}

/** A delay before attempt `attempt` (0, 1, …): doubling from 100 ms up to `capMs`, with ±20 % jitter. */
export function backoffMs(attempt: number, capMs: number): number {
  const base = Math.min(capMs, 100 * 2 ** Math.min(attempt, 16));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * Whether the coordinator answers, as the `flotilla_coordination_connected` gauge and one log
 * line per change: at warn when it stops answering (with the error), at info when it answers again.
 */
export class Link {
  readonly #logger: Logger;
  readonly #set: (connected: 0 | 1) => void;
  #state: 'unknown' | 'up' | 'down' | 'closed' = 'unknown';
  #downSince = 0;
  #everUp = false;
  readonly #consequence: string;

  /** `consequence`: what the warning says stops working while the coordinator is unreachable. */
  constructor(
    logger: Logger,
    set: (connected: 0 | 1) => void,
    consequence = 'cron fires are skipped and the lease is given up until it answers again',
  ) {
    this.#logger = logger;
    this.#set = set;
    this.#consequence = consequence;
  }

  get connected(): boolean {
    return this.#state === 'up';
  }

  up(): void {
    if (this.#state === 'up' || this.#state === 'closed') return;
    const was = this.#state;
    this.#state = 'up';
    this.#set(1);
    if (was === 'down' && this.#everUp) this.#logger.info({ downMs: Date.now() - this.#downSince }, 'coordinator reachable again');
    else this.#logger.info('coordinator connected');
    this.#everUp = true;
  }

  down(error: unknown): void {
    if (this.#state === 'down' || this.#state === 'closed') return;
    this.#state = 'down';
    this.#downSince = Date.now();
    this.#set(0);
    this.#logger.warn({ error: describeError(error) }, `coordinator unreachable: ${this.#consequence}`);
  }

  /** The connections are being closed on purpose: no more changes are reported. */
  close(): void {
    this.#state = 'closed';
    this.#set(0);
  }
}
