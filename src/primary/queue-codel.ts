/** After a dropping spell ends, a standing queue this soon (intervals) drops again at once (CoDel's memory). */
const RECENT_INTERVALS = 4;

/** The deadline of the primary's queue (`overload.queueTargetMs` / `queueIntervalMs`). */
export interface QueueLimits {
  targetMs: number;
  intervalMs: number;
}

/**
 * When the primary's queue drops: CoDel on its head, as Fail at Scale reads it
 * for a server. Once the oldest connection's wait has stayed above `targetMs`
 * for a whole `intervalMs` (a standing queue, not a burst), or at once when
 * the last dropping spell ended less than 4 intervals ago (the overload goes
 * on), the queue is dropping — what has waited longer than `targetMs` is
 * answered 503 — until it empties. A burst shorter than the interval waits.
 *
 * @example
 * const codel = new QueueCoDel({ targetMs: 20, intervalMs: 100 });
 * if (codel.dropping(now, oldest.since)) shedOlderThan(20); … codel.emptied(now);
 */
export class QueueCoDel {
  readonly #limits: QueueLimits;
  /** Since when the oldest waiting connection has waited longer than the target (`performance.now()`). */
  #aboveSince: number | undefined;
  #dropping = false;
  #droppingEnded = Number.NEGATIVE_INFINITY;

  constructor(limits: QueueLimits) {
    this.#limits = limits;
  }

  /**
   * Whether to drop now, the oldest connection having waited since `oldestSince`; `force`: drop at once
   * (the shutdown); `limits`: the deadline this time (a more patient one while workers warm up).
   */
  dropping(now: number, oldestSince: number, force = false, { targetMs, intervalMs } = this.#limits): boolean {
    if (now - oldestSince <= targetMs) {
      this.#aboveSince = undefined;
      return this.#dropping;
    }
    if (this.#dropping) return true;
    this.#aboveSince ??= now;
    const recent = now - this.#droppingEnded < RECENT_INTERVALS * this.#limits.intervalMs;
    this.#dropping = force || recent || now - this.#aboveSince >= intervalMs;
    return this.#dropping;
  }

  /** The queue is empty: a dropping spell ends here. */
  emptied(now: number): void {
    this.#aboveSince = undefined;
    if (this.#dropping) this.#droppingEnded = now;
    this.#dropping = false;
  }
}
