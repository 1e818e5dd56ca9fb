import { Pool } from 'undici';
import { get } from './fresh-get.ts';

/**
 * An open-loop load: `rate` requests a second on a fixed schedule, whatever the answers take, so that a
 * disturbance (a killed, restarting or busy worker) cannot slow the client down and hide itself. Requests go
 * on the keep-alive connections of an undici pool, every `freshEvery`-th on a new connection of its own
 * (node:cluster deals connections round-robin, so every worker serves, replacements included); beyond
 * `maxInFlight` unanswered a request is not sent but counted as skipped, so the load stays bounded whatever
 * happens. It counts what the client got: the 2xx are what a server-side counter must add up to. Used by
 * `test/integration/prometheus-truth.test.ts` and `reliability/scenarios/prometheus-truth.ts`.
 */

export interface SteadyLoadOptions {
  /** The application port, on 127.0.0.1. */
  port: number;
  /** The path every request GETs, e.g. `/who`. */
  path: string;
  /** Requests per second. */
  rate: number;
  /** Every n-th request goes on a new connection. */
  freshEvery: number;
  /** Requests still unanswered beyond this are not sent (counted as skipped). */
  maxInFlight: number;
  /** Keep-alive connections of the pool; default 8. */
  connections?: number;
  /** Client timeout of each request, ms; default 20 000. */
  timeoutMs?: number;
}

export class SteadyLoad {
  sent = 0;
  ok = 0;
  other = 0;
  failed = 0;
  skipped = 0;
  /** Failed requests by error code (or message). */
  readonly errors = new Map<string, number>();
  /** Every 2xx whose body names a `"pid"`: that pid and when it answered (ms since the epoch). */
  readonly answered: { pid: number; at: number }[] = [];
  readonly #options: Required<SteadyLoadOptions>;
  readonly #pool: Pool;
  readonly #inFlight = new Set<Promise<void>>();
  #running = true;

  constructor(options: SteadyLoadOptions) {
    this.#options = { connections: 8, timeoutMs: 20_000, ...options };
    this.#pool = new Pool(`http://127.0.0.1:${options.port}`, { connections: this.#options.connections, pipelining: 1 });
  }

  /** Sends on schedule for `durationMs`, or until `stop()`; resolves without waiting for the answers (see `settled()`). */
  async run(durationMs: number): Promise<void> {
    const started = performance.now();
    let issued = 0;
    for (;;) {
      const elapsed = performance.now() - started;
      if (!this.#running || elapsed >= durationMs) return;
      const due = Math.floor((elapsed / 1000) * this.#options.rate);
      for (; issued < due; issued++) {
        if (this.#inFlight.size >= this.#options.maxInFlight) this.skipped++;
        else this.#send(issued % this.#options.freshEvery === 0);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  stop(): void {
    this.#running = false;
  }

  /** Waits for every request in flight (each ends at its timeout at the latest). */
  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  /** Closes the pool's connections. */
  async destroy(): Promise<void> {
    await this.#pool.destroy();
  }

  #send(fresh: boolean): void {
    this.sent++;
    const done = (fresh ? this.#fresh() : this.#pooled()).then(
      ({ status, body }) => {
        if (status >= 200 && status < 300) {
          this.ok++;
          const match = /"pid":(\d+)/.exec(body);
          if (match !== null) this.answered.push({ pid: Number(match[1]), at: performance.timeOrigin + performance.now() });
        } else this.other++;
      },
      (error: unknown) => {
        this.failed++;
        const message = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
        this.errors.set(message, (this.errors.get(message) ?? 0) + 1);
      },
    );
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }

  async #pooled(): Promise<{ status: number; body: string }> {
    const { path, timeoutMs } = this.#options;
    const res = await this.#pool.request({ method: 'GET', path, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    return { status: res.statusCode, body: await res.body.text() };
  }

  /** On a connection of its own, so that it reaches the next worker. */
  #fresh(): Promise<{ status: number; body: string }> {
    return get(this.#options.port, this.#options.path, this.#options.timeoutMs);
  }
}
