/**
 * A counter of requests per key and fixed window: what rate limits are counted in
 * (ARCHITECTURE.md, "Rate limits"). One `hit` adds one request to the key's current window, atomically
 * at the store, and tells the count so far with the time left; the caller compares it with its limit.
 * A window begins with the first hit on a key that has none running and lasts `windowMs`: the
 * approach of rate-limiter-flexible's fixed windows (INCR, and PEXPIRE when the key is new).
 */
export interface CounterStore {
  /**
   * Counts one request for `key` in its window of `windowMs`: the count including this one, and the
   * ms until the window ends. Synchronous when the store is in-process; rejects (or throws) when the
   * store cannot be reached.
   */
  hit(key: string, windowMs: number): WindowCount | Promise<WindowCount>;
  /**
   * Takes one request back from `key`'s running window: one its limit's `countIf` does not count
   * after all. Nothing when the window has ended (its count is gone with it) or holds none.
   */
  release(key: string): void | Promise<void>;
  /** Releases the store's connections and memory. */
  close(): Promise<void>;
}

/** The state of one key's window after a hit. */
export interface WindowCount {
  /** Requests counted in the window, this one included (it keeps counting past the limit). */
  readonly count: number;
  /** Milliseconds until the window ends and the count starts again from zero. */
  readonly resetMs: number;
}
