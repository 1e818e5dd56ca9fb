import type { CounterStore, WindowCount } from './counter-store.ts';

/** Windows looked at (and dropped when ended) per hit: the sweep's share of each request, bounded. */
const SWEEP_PER_HIT = 4;

interface Window {
  count: number;
  /** `performance.now()` at which it ends. */
  endsAt: number;
}

/**
 * The in-process {@link CounterStore}: a Map of fixed windows, counted synchronously (so atomically,
 * within one event loop). A standalone App counts in one of these, and so does the cluster's primary
 * for all its workers' requests. Ended windows are dropped by a sweep that goes on a few entries per
 * hit (a cursor over the Map, started again at its end): no hit ever pays for the whole Map, which the
 * primary's main thread, which also hands connections over, could not afford with many keys; and the
 * sweep outpaces new keys, since a hit brings at most one and 4 steps of the sweep. An idle store keeps the windows of its
 * last traffic until the next hits, and has no timer.
 *
 * @example
 * const store = new MemoryCounterStore();
 * store.hit('GET /books|60000|127.0.0.1', 60_000); // { count: 1, resetMs: 60000 }
 */
export class MemoryCounterStore implements CounterStore {
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;
  #cursor: MapIterator<[string, Window]> | undefined;

  /** `now`: the clock in ms (tests pass their own). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Windows currently held (ended ones included until the next sweep). */
  get size(): number {
    return this.#windows.size;
  }

  hit(key: string, windowMs: number): WindowCount {
    const now = this.#now();
    this.#sweep(now);
    const window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      this.#windows.set(key, { count: 1, endsAt: now + windowMs });
      return { count: 1, resetMs: windowMs };
    }
    window.count++;
    return { count: window.count, resetMs: window.endsAt - now };
  }

  release(key: string): void {
    const window = this.#windows.get(key);
    if (window !== undefined && window.endsAt > this.#now() && window.count > 0) window.count--;
  }

  async close(): Promise<void> {
    this.#windows.clear();
    this.#cursor = undefined;
  }

  /** A few steps of the sweep (deleting the entry a Map iterator is on is safe: it goes on with the next). */
  #sweep(now: number): void {
    for (let i = 0; i < SWEEP_PER_HIT; i++) {
      this.#cursor ??= this.#windows.entries();
      const next = this.#cursor.next();
      if (next.done === true) {
        this.#cursor = undefined;
        return;
      }
      const [key, window] = next.value;
      if (window.endsAt <= now) this.#windows.delete(key);
    }
  }
}
