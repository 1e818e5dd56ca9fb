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
 * The primary's watchdog over its workers' event loops: pings every watched
 * worker each `intervalMs` over IPC and declares one stuck when it has not
 * answered (a `flotilla:pong`) for `timeoutMs`. A worker is watched from the
 * moment it listens until it exits or starts retiring; the supervisor decides
 * what a stuck worker means (see `supervisor.ts`).
 *
 * @example
 * const hb = new Heartbeat({ intervalMs: 1000, timeoutMs: 10_000 }, { ping, stuck, age });
 * hb.watch(worker); // … on 'flotilla:pong': hb.answered(worker)
 */
export class Heartbeat<W> {
  readonly #policy: HeartbeatPolicy;
  readonly #hooks: HeartbeatHooks<W>;
  readonly #lastAnswer = new Map<W, number>();
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(policy: HeartbeatPolicy, hooks: HeartbeatHooks<W>) {
    this.#policy = policy;
    this.#hooks = hooks;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.tick(Date.now()), this.#policy.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#lastAnswer.clear();
  }

  watch(worker: W, now = Date.now()): void {
    this.#lastAnswer.set(worker, now);
  }

  unwatch(worker: W): void {
    this.#lastAnswer.delete(worker);
  }

  answered(worker: W, now = Date.now()): void {
    if (this.#lastAnswer.has(worker)) this.#lastAnswer.set(worker, now);
  }

  /** One round: age and stuck checks, then a ping to every worker still watched. */
  tick(now: number): void {
    const seq = this.#seq++;
    for (const [worker, last] of [...this.#lastAnswer]) {
      const silentMs = now - last;
      this.#hooks.age(worker, silentMs);
      if (this.#policy.timeoutMs > 0 && silentMs >= this.#policy.timeoutMs) {
        this.#lastAnswer.delete(worker);
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
