import type { CounterStore, WindowCount } from './counter-store.ts';

/** Expired windows are swept at most this often, on a hit: no timer of its own. */
const SWEEP_EVERY_MS = 1_000;

interface Window {
  count: number;
  /** `performance.now()` at which it ends. */
  endsAt: number;
}

/**
 * The in-process {@link CounterStore}: a Map of fixed windows, counted synchronously (so atomically,
 * within one event loop). A standalone App counts in one of these, and so does the cluster's primary
 * for all its workers' requests. Ended windows are dropped by a sweep made on a hit, at most once a
 * second: an idle store keeps the windows of its last traffic until the next hit, and has no timer.
 *
 * @example
 * const store = new MemoryCounterStore();
 * store.hit('GET /books|60000|127.0.0.1', 60_000); // { count: 1, resetMs: 60000 }
 */
export class MemoryCounterStore implements CounterStore {
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;
  #sweptAt: number;

  /** `now`: the clock in ms (tests pass their own). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#sweptAt = now();
  }

  /** Windows currently held (ended ones included until the next sweep). */
  get size(): number {
    return this.#windows.size;
  }

  hit(key: string, windowMs: number): WindowCount {
    const now = this.#now();
    if (now - this.#sweptAt >= SWEEP_EVERY_MS) this.#sweep(now);
    const window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      this.#windows.set(key, { count: 1, endsAt: now + windowMs });
      return { count: 1, resetMs: windowMs };
    }
    window.count++;
    return { count: window.count, resetMs: window.endsAt - now };
  }

  async close(): Promise<void> {
    this.#windows.clear();
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(key);
  }
}
