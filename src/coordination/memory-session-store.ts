import type { SessionStore, StoredSession } from './session-store.ts';

/** How often expired sessions are swept out of memory (a read never returns one in between). */
const SWEEP_EVERY_MS = 60_000;

/** How often, at most, the store says it dropped sessions to stay within its budget. */
const WARN_EVERY_MS = 60_000;

/**
 * What holding one session costs the heap beside its id and data strings, in bytes, as V8 lays it
 * out on 64-bit (Node's builds: no pointer compression), measured by bench/session-memory.ts over
 * 100,000 sessions (bench/results/session-memory.md): the entry object `{ data, expiresAt, bytes }`
 * (48), the heap number of its expiry (16), and its share of the Map's hash table, 28 bytes per
 * slot of capacity, which doubles as the map grows: 28 to 56 per session, 42 counted. Where
 * pointers are compressed the heap holds less than this counts, never more.
 */
export const SESSION_ENTRY_BYTES = 48 + 16 + 42;

/** A V8 sequential string's header (map, hash, length), before its characters; the whole rounded up to 8 bytes. */
const STRING_HEADER_BYTES = 16;

/** A character that does not fit in one byte: a string holding one is stored with two bytes per character. */
const TWO_BYTE = /[\u0100-\uffff]/;

/**
 * The bytes a string takes on the heap, as a flat string (what `JSON.stringify` and the IPC's
 * `JSON.parse` make): one byte per character while every character is Latin-1, else two.
 *
 * @example
 * stringBytes('x'.repeat(32)); // 48
 */
export function stringBytes(text: string): number {
  const chars = TWO_BYTE.test(text) ? 2 * text.length : text.length;
  return (STRING_HEADER_BYTES + chars + 7) & ~7;
}

/** What a memory store may hold, and whom it tells when it drops sessions to stay within it. */
export interface MemorySessionStoreOptions {
  /**
   * Most bytes all sessions may take on the heap (`sessions.memoryBytes`): their ids and data as
   * stored, and {@link SESSION_ENTRY_BYTES} each for the map entry and the expiry; unbounded when absent.
   */
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
 * The sessions take at most `maxBytes` of the heap, each counted for what holding it costs: its id
 * and data strings as V8 stores them, its entry and its slot in the map (the store keeps no other
 * index: the map's order is the eviction order, and the expiry sits in the entry). Past it, the
 * sessions saved least recently go first (the map keeps them in the order they were last saved, so
 * the oldest is its first entry). A flood of new sessions thus costs the oldest ones, never the
 * process's memory.
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
  /**
   * Where the last eviction stopped: the next session to drop. Let go by each sweep, since an idle
   * iterator keeps the map's former hash tables alive until it moves on.
   */
  #oldest: MapIterator<string> | undefined;

  constructor({ maxBytes = Number.POSITIVE_INFINITY, onEvicted, now = Date.now }: MemorySessionStoreOptions = {}) {
    this.#maxBytes = maxBytes;
    this.#onEvicted = onEvicted;
    this.#now = now;
  }

  /** Bytes the sessions held take on the heap, as counted against `maxBytes`, expired ones not yet swept included. */
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
    const bytes = SESSION_ENTRY_BYTES + stringBytes(id) + stringBytes(data);
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
    this.#oldest = undefined;
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#remove(id);
    if (this.#sessions.size === 0) this.#stopSweeping();
  }

  async close(): Promise<void> {
    this.#stopSweeping();
    this.#oldest = undefined;
    this.#sessions.clear();
    this.#bytes = 0;
  }

  #remove(id: string): void {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    this.#sessions.delete(id);
    this.#bytes -= session.bytes;
  }

  /**
   * Drops the sessions saved least recently, but `kept` (the one just saved, the map's last), until
   * the rest fit. The walk resumes where the last one stopped: a map iterator started afresh would
   * step again over every entry dropped before (V8 leaves their slots in place until the table is
   * rebuilt), which in a flood would cost each save a walk over up to the whole table.
   */
  #makeRoom(kept: string): void {
    let fresh = false;
    while (this.#bytes > this.#maxBytes) {
      if (this.#oldest === undefined) {
        this.#oldest = this.#sessions.keys();
        fresh = true;
      }
      const next = this.#oldest.next();
      if (next.done === true || next.value === kept) {
        // the end: the next walk starts from the first entry again
        this.#oldest = undefined;
        if (next.done !== true || fresh) break;
        continue;
      }
      this.#remove(next.value);
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
