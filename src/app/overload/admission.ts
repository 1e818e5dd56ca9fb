/** After shedding stopped, a delay above the target this soon (intervals) sheds again at once (CoDel's memory). */
const RECENT_INTERVALS = 4;

/** The backlog grew, for shedding to start: to three times where it stood, and this many requests more. */
const MIN_GROWTH = 16;

/** What the admission control reads of the config (`overload`). */
export interface AdmissionOptions {
  /** Shedding starts once the queue stood for `intervalMs` and the requests' wait is above this. */
  readonly targetMs: number;
  /** How long the wait must stay above (or at most) `shedAfterMs` to start (or stop) shedding. */
  readonly intervalMs: number;
  /** While shedding, a request that waited longer than this is turned away (at most `targetMs`; default `targetMs`). */
  readonly shedAfterMs?: number;
  /** Hears every change of state, with the delay sample that made it. */
  readonly onChange?: (shedding: boolean, delayMs: number) => void;
}

/**
 * Admission control for the requests that queue in this process's own sockets (keep-alive connections,
 * `balancing: kernel`, a standalone App), where no one else sees them wait. A request waits twice: unread,
 * while the loop is busy elsewhere, then read, in the `RequestQueue` until its turn is served (a new
 * connection's wait in the listener's accept queue becomes the second kind, see request-queue.ts). A
 * probe timer is due every `probeMs` (a fifth of `shedAfterMs`, at most 10 ms) while requests come in:
 * the first request arms it, and it stops after an interval without any (and not shedding), so an idle
 * App has no timer. How overdue the probe was when a request was read is its first wait; the time from
 * then to its route's start, its second. Their sum is the request's queueing delay, and the largest
 * since the previous probe is the delay the rule below reads; the longest queue a request left behind
 * it since then is the backlog.
 *
 * CoDel's rule on that delay, with two thresholds, gated by the backlog's growth: the queue stands
 * while the delay stays above `shedAfterMs`; shedding starts once it stood for a whole `intervalMs`, the
 * delay is now above `targetMs` (a burst shorter than that is absorbed), and the backlog is growing:
 * three times as long as when the queue began to stand plus 16 requests, and longer than an interval
 * ago. Within 4 intervals of the last shedding spell (the overload goes on)
 * the interval need not pass. While shedding, a new request is turned away only if it waited longer
 * than `shedAfterMs`: the queue is served oldest first, so the worker keeps serving at its capacity,
 * with a queueing delay near `shedAfterMs`, and sheds only the excess, at a few µs each; shedding stops
 * once the queue stopped standing for an interval.
 *
 * Why the growth: a bounded load is never overload. A closed loop of N clients (each waits for its
 * answer before it sends again: a benchmark, a connection pool) can make requests wait long, N times
 * a request's cost, but its backlog stops growing once its N requests are in: an answer lets one more
 * in, no more. Only arrivals beyond what the worker can serve make the backlog keep growing, and only
 * those are shed. The bar is high because a worker's share of a closed loop drifts: each client's
 * next connection is accepted by whichever worker is free first, and a worker the machine held up a
 * moment leaves the others more clients (22 → 44 of 64 clients on 2 workers, measured on a busy
 * machine); a bounded share does not triple past 16 more. At 3× capacity the backlog triples within a
 * few intervals, and the first 503s are the slower for it (reliability/results). A single client
 * whose heavy request held the loop leaves a backlog of one.
 *
 * Measured at the requests rather than at the probe: a client sending heavy requests one after the
 * other over a socket keeps the loop busy, yet each request is read in a turn of its own, after the
 * probe fired, and served in it: nobody waits, and nothing is shed.
 *
 * @example
 * const admission = new Admission({ targetMs: 50, intervalMs: 50, shedAfterMs: 15 });
 * if (!admission.admit(started, performance.now(), queue.size)) throw KError.of('OVERLOADED');
 */
export class Admission {
  readonly #targetMs: number;
  readonly #intervalMs: number;
  readonly #shedAfterMs: number;
  readonly #probeMs: number;
  readonly #onChange: ((shedding: boolean, delayMs: number) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #armed = false;
  /** When the armed probe is due (`performance.now()`). */
  #dueAt = 0;
  /** A request came in since the last probe. */
  #active = false;
  /** The longest a request waited since the last probe (unread, then queued). */
  #waited = 0;
  /** The longest queue a request left behind it since the last probe. */
  #queued = 0;
  /** The backlog the last probe measured (kept through probes that saw no request). */
  #backlog = 0;
  /** The backlog when the queue began to stand, or when shedding last stopped: growth is counted from it. */
  #floor = 0;
  /** The backlog at the last interval mark, and when that was: growth must still be going on. */
  #marked = 0;
  #markedAt = Number.NEGATIVE_INFINITY;
  #previous = 0;
  /** Probes in a row that saw no request: at an interval's worth, the probe stops. */
  #quiet = 0;
  /** The delay the last probe measured. */
  #delayMs = 0;
  #shedding = false;
  /** Since when the queue has stood (delay above `shedAfterMs`) while admitting, or has not while shedding. */
  #since = Number.NaN;
  /** When shedding last stopped: a delay above the target within 4 intervals sheds again at once. */
  #stoppedAt = Number.NEGATIVE_INFINITY;
  /** When shedding last started: what was read before is served, not shed (it is no new arrival). */
  #startedAt = Number.POSITIVE_INFINITY;

  constructor(options: AdmissionOptions) {
    this.#targetMs = options.targetMs;
    this.#intervalMs = options.intervalMs;
    this.#shedAfterMs = Math.min(options.shedAfterMs ?? options.targetMs, options.targetMs);
    // a few samples per threshold: the wait is known within a fifth of the smaller, at no more than 100 wake-ups a second
    this.#probeMs = Math.min(10, Math.max(1, Math.floor(this.#shedAfterMs / 5)));
    this.#onChange = options.onChange;
  }

  /** True while requests are being shed. */
  get shedding(): boolean {
    return this.#shedding;
  }

  /** While shedding, a request that waited (or would wait) longer than this is turned away. */
  get shedAfterMs(): number {
    return this.#shedAfterMs;
  }

  /** The queueing delay the last probe took in, in ms. */
  get delayMs(): number {
    return this.#delayMs;
  }

  /**
   * Whether to serve a new request; false: answer it 503 at once. Called once per request, with the
   * time it was read, the time its route starts (`performance.now()` both) and how many requests still
   * wait behind it (the backlog: 0 when it did not queue). `expectedMs`: decided as it arrives, the
   * wait it would have in the queue (see request-queue.ts); it is turned away if that is too long.
   */
  admit(started: number, now: number, backlog = 0, expectedMs = 0): boolean {
    this.#active = true;
    if (backlog > this.#queued) this.#queued = backlog;
    if (expectedMs > 0) return !this.#shedding || expectedMs <= this.#shedAfterMs;
    if (!this.#armed) {
      this.#arm(now);
      return !this.#shedding;
    }
    // late when read (the loop was busy elsewhere), then queued until now (see request-queue.ts)
    const waited = Math.max(0, started - this.#dueAt) + (now - started);
    if (waited > this.#waited) this.#waited = waited;
    // what queued before shedding started is served: turning it away now would make the slowest 503s
    return !this.#shedding || waited <= this.#shedAfterMs || started < this.#startedAt;
  }

  /** Drops the probe (the App has closed). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armed = false;
  }

  #arm(now: number): void {
    this.#armed = true;
    this.#dueAt = now + this.#probeMs;
    // one Timeout object, re-armed: no allocation per probe
    if (this.#timer === undefined) this.#timer = setTimeout(this.#probe, this.#probeMs).unref();
    else this.#timer.refresh();
  }

  readonly #probe = (): void => {
    const now = performance.now();
    const delay = this.#waited;
    this.#waited = 0;
    this.#delayMs = delay;
    if (this.#active) this.#backlog = this.#queued;
    this.#queued = 0;
    if (now - this.#markedAt >= this.#intervalMs) {
      this.#previous = this.#marked;
      this.#marked = this.#backlog;
      this.#markedAt = now;
    }
    // a turn without a request says nothing of a queue building up, but lets one that emptied stop the shedding
    if (this.#active || this.#shedding) this.#observe(now, delay);
    this.#quiet = this.#active ? 0 : this.#quiet + 1;
    this.#active = false;
    // while shedding, until the delay has come down; otherwise until an interval without a request
    if (this.#shedding || this.#quiet * this.#probeMs < this.#intervalMs) {
      this.#arm(now);
    } else {
      this.#armed = false;
      this.#quiet = 0;
      this.#since = Number.NaN;
    }
  };

  /**
   * The queue stands while the delay stays above `shedAfterMs`: shedding starts once it stood for an
   * interval with the delay now above the target and the backlog growing (at once within 4 intervals of
   * the last spell: CoDel's memory, the overload goes on), and stops once it stopped standing for an
   * interval.
   */
  #observe(now: number, delay: number): void {
    if (delay > this.#shedAfterMs === this.#shedding) {
      this.#since = Number.NaN;
      return;
    }
    const recent = now - this.#stoppedAt < RECENT_INTERVALS * this.#intervalMs;
    if (Number.isNaN(this.#since)) {
      this.#since = now;
      // after a spell that just stopped, growth counts from where the backlog stood then
      if (!this.#shedding && !recent) this.#floor = this.#backlog;
    }
    const lasted = now - this.#since >= this.#intervalMs;
    if (this.#shedding) {
      if (lasted) this.#toggle(now, delay);
    } else if (delay > this.#targetMs && (lasted || recent) && this.#growing()) {
      this.#toggle(now, delay);
    }
  }

  /** Whether the backlog grew since the queue began to stand, and is still longer than an interval ago. */
  #growing(): boolean {
    const backlog = this.#backlog;
    return backlog >= 3 * this.#floor + MIN_GROWTH && backlog > this.#previous;
  }

  #toggle(now: number, delay: number): void {
    this.#shedding = !this.#shedding;
    this.#startedAt = this.#shedding ? now : Number.POSITIVE_INFINITY;
    if (!this.#shedding) {
      this.#stoppedAt = now;
      this.#floor = this.#backlog;
    }
    this.#since = Number.NaN;
    this.#onChange?.(this.#shedding, delay);
  }
}
