/** Heartbeat settings (`cluster.heartbeatIntervalMs`, `cluster.heartbeatTimeoutMs`; a timeout of 0 turns the watchdog off). */
export interface HeartbeatPolicy {
  intervalMs: number;
  timeoutMs: number;
}

export interface HeartbeatHooks<W> {
  /** Sends `flotilla:ping` with `seq`; may throw when the channel is gone (the worker's exit follows). */
  ping(worker: W, seq: number): void;
  /** The worker has not answered for `timeoutMs`: it is stuck. Called once; the worker is unwatched. */
  stuck(worker: W, silentMs: number): void;
  /** On every tick, for every watched worker: time since its last answer (for the heartbeat-age gauge). */
  age(worker: W, silentMs: number): void;
}

/**
 * How far apart the rounds are while every watched worker said it is idle: four intervals, but
 * at most a quarter of the timeout (never less than one interval). With the defaults (1 s, 10 s)
 * 2.5 s: an idle pod wakes its processes less than half as often, and a worker that gets stuck
 * meanwhile is still found within `timeoutMs` plus one idle round.
 */
export function idleIntervalMs({ intervalMs, timeoutMs }: HeartbeatPolicy): number {
  const cap = timeoutMs > 0 ? Math.floor(timeoutMs / 4) : Number.POSITIVE_INFINITY;
  return Math.max(intervalMs, Math.min(4 * intervalMs, cap));
}

/**
 * The primary's watchdog over its workers' event loops: pings every watched
 * worker each `intervalMs` over IPC and declares one stuck when it has not
 * answered (a `flotilla:pong`) for `timeoutMs`. A worker is watched from the
 * moment it listens until it exits or starts retiring; the supervisor decides
 * what a stuck worker means (see `supervisor.ts`). While every watched worker's
 * last answer said it was idle, the rounds stretch to `idleIntervalMs`.
 *
 * @example
 * const hb = new Heartbeat({ intervalMs: 1000, timeoutMs: 10_000 }, { ping, stuck, age });
 * hb.watch(worker); // … on 'flotilla:pong': hb.answered(worker, Date.now(), isIdle(previous, pong))
 */
export class Heartbeat<W> {
  readonly #policy: HeartbeatPolicy;
  readonly #hooks: HeartbeatHooks<W>;
  readonly #lastAnswer = new Map<W, number>();
  /** The workers whose last answer said they were idle. */
  readonly #idle = new Set<W>();
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(policy: HeartbeatPolicy, hooks: HeartbeatHooks<W>) {
    this.#policy = policy;
    this.#hooks = hooks;
  }

  start(): void {
    if (this.#timer === undefined) this.#schedule();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastAnswer.clear();
    this.#idle.clear();
  }

  watch(worker: W, now = Date.now()): void {
    this.#lastAnswer.set(worker, now);
  }

  unwatch(worker: W): void {
    this.#lastAnswer.delete(worker);
    this.#idle.delete(worker);
  }

  /** `idle`: the answer says the worker did nothing since its previous one (see `isIdle`). */
  answered(worker: W, now = Date.now(), idle = false): void {
    if (!this.#lastAnswer.has(worker)) return;
    this.#lastAnswer.set(worker, now);
    if (idle) this.#idle.add(worker);
    else this.#idle.delete(worker);
  }

  /** The pause before the next round: stretched while every watched worker is idle. */
  get nextRoundMs(): number {
    return this.#idle.size === this.#lastAnswer.size ? idleIntervalMs(this.#policy) : this.#policy.intervalMs;
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      this.tick(Date.now());
      if (this.#timer !== undefined) this.#schedule();
    }, this.nextRoundMs);
    this.#timer.unref();
  }

  /** One round: age and stuck checks, then a ping to every worker still watched. */
  tick(now: number): void {
    const seq = this.#seq++;
    for (const [worker, last] of [...this.#lastAnswer]) {
      const silentMs = now - last;
      this.#hooks.age(worker, silentMs);
      if (this.#policy.timeoutMs > 0 && silentMs >= this.#policy.timeoutMs) {
        this.unwatch(worker);
        this.#hooks.stuck(worker, silentMs);
        continue;
      }
      try {
        this.#hooks.ping(worker, seq);
      } catch {
        // the channel is closing: the worker's exit is on its way
      }
    }
  }
}
