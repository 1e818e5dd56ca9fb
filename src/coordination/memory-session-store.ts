import type { SessionStore, StoredSession } from './session-store.ts';

/** How often expired sessions are swept out of memory (a read never returns one in between). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Sessions in this process's memory: a standalone App's, and the cluster primary's for all its
 * workers (src/primary/cluster-sessions.ts). An expired session is never returned; the expired ones
 * are swept once a minute by an unref'd timer, so a forgotten store holds no process open.
 *
 * @example
 * const store = new MemorySessionStore();
 * await store.set('abc', '{"user":1}', 3_600_000);
 * (await store.get('abc'))?.data; // '{"user":1}'
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, { data: string; expiresAt: number }>();
  readonly #now: () => number;
  #sweeper: NodeJS.Timeout | undefined;

  /** `now`: the clock (tests move it). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Sessions held, expired ones not yet swept included. */
  get size(): number {
    return this.#sessions.size;
  }

  async get(id: string): Promise<StoredSession | undefined> {
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    const ttlLeftMs = session.expiresAt - this.#now();
    if (ttlLeftMs > 0) return { data: session.data, ttlLeftMs };
    this.#sessions.delete(id);
    return undefined;
  }

  async set(id: string, data: string, ttlMs: number): Promise<void> {
    this.#sessions.set(id, { data, expiresAt: this.#now() + ttlMs });
    this.#sweeper ??= setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
  }

  async delete(id: string): Promise<void> {
    this.#sessions.delete(id);
  }

  /** Drops the expired sessions; the sweeper's timer stops once none is left. */
  sweep(): void {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#sessions.delete(id);
    if (this.#sessions.size === 0) this.#stopSweeping();
  }

  async close(): Promise<void> {
    this.#stopSweeping();
    this.#sessions.clear();
  }

  #stopSweeping(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }
}
