import type { SessionStore, StoredSession } from './session-store.ts';

/** How often expired sessions are swept out of memory (a read never returns one in between). */
const SWEEP_EVERY_MS = 60_000;

/** How often, at most, the store says it dropped sessions to stay within its budget. */
const WARN_EVERY_MS = 60_000;

/** What a memory store may hold, and whom it tells when it drops sessions to stay within it. */
export interface MemorySessionStoreOptions {
  /** Most bytes all sessions may take, ids and data (`sessions.memoryBytes`); unbounded when absent. */
  maxBytes?: number;
  /** Told, at most once a minute, how many sessions were dropped since it was last told. */
  onEvicted?: (count: number) => void;
  /** The clock (tests move it). */
  now?: () => number;
}

/**
 * Sessions in this process's memory: a standalone App's, and the cluster primary's for all its
 * workers (src/primary/cluster-sessions.ts). An expired session is never returned; the expired ones
 * are swept once a minute by an unref'd timer, so a forgotten store holds no process open.
 *
 * The sessions take at most `maxBytes`: past it, the sessions saved least recently go first (the
 * map keeps them in the order they were last saved, so the oldest is its first entry). A flood of new
 * sessions thus costs the oldest ones, never the process's memory.
 *
 * @example
 * const store = new MemorySessionStore({ maxBytes: 64 * 1024 * 1024 });
 * await store.set('abc', '{"user":1}', 3_600_000);
 * (await store.get('abc'))?.data; // '{"user":1}'
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, { data: string; expiresAt: number; bytes: number }>();
  readonly #now: () => number;
  readonly #maxBytes: number;
  readonly #onEvicted: ((count: number) => void) | undefined;
  #bytes = 0;
  #evicted = 0;
  #warnedAt = Number.NEGATIVE_INFINITY;
  #sweeper: NodeJS.Timeout | undefined;

  constructor({ maxBytes = Number.POSITIVE_INFINITY, onEvicted, now = Date.now }: MemorySessionStoreOptions = {}) {
    this.#maxBytes = maxBytes;
    this.#onEvicted = onEvicted;
    this.#now = now;
  }

  /** Bytes the sessions held take (ids and data), expired ones not yet swept included. */
  get bytes(): number {
    return this.#bytes;
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
    this.#remove(id);
    return undefined;
  }

  async set(id: string, data: string, ttlMs: number): Promise<void> {
    // removed first, so that the session moves to the end of the map: the most recently saved
    this.#remove(id);
    const bytes = Buffer.byteLength(id) + Buffer.byteLength(data);
    this.#sessions.set(id, { data, expiresAt: this.#now() + ttlMs, bytes });
    this.#bytes += bytes;
    if (this.#bytes > this.#maxBytes) this.#makeRoom(id);
    this.#sweeper ??= setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
  }

  async delete(id: string): Promise<void> {
    this.#remove(id);
  }

  /** Drops the expired sessions; the sweeper's timer stops once none is left. */
  sweep(): void {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#remove(id);
    if (this.#sessions.size === 0) this.#stopSweeping();
  }

  async close(): Promise<void> {
    this.#stopSweeping();
    this.#sessions.clear();
    this.#bytes = 0;
  }

  #remove(id: string): void {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    this.#sessions.delete(id);
    this.#bytes -= session.bytes;
  }

  /** Drops the sessions saved least recently, but `kept` (the one just saved), until the rest fit. */
  #makeRoom(kept: string): void {
    for (const id of this.#sessions.keys()) {
      if (this.#bytes <= this.#maxBytes) break;
      if (id === kept) continue;
      this.#remove(id);
      this.#evicted++;
    }
    const now = this.#now();
    if (this.#evicted > 0 && now - this.#warnedAt >= WARN_EVERY_MS) {
      this.#onEvicted?.(this.#evicted);
      this.#evicted = 0;
      this.#warnedAt = now;
    }
  }

  #stopSweeping(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }
}
