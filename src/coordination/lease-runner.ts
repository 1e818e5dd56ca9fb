import type { Logger } from 'pino';
import type { Scheduler, SchedulerEnv } from '../scheduler/scheduler.ts';
import { backoffMs, type Coordinator, describeError } from './coordinator.ts';

export interface LeaseRunnerOptions {
  readonly coordinator: Coordinator;
  /** The schedulers that run on the lease holder only. */
  readonly schedulers: readonly Scheduler[];
  /** What each is bound with before each start, `fencingToken` added. */
  readonly env: SchedulerEnv;
  readonly ttlMs: number;
  readonly renewMs: number;
  readonly logger: Logger;
  /** Follows the lease: the `flotilla_coordination_lease_held` gauge. */
  readonly held: (held: boolean) => void;
}

/**
 * Runs the lease-based schedulers on one replica at a time (ARCHITECTURE.md, "Coordination"):
 *
 * 1. Standby: try to take the lease every `renewMs` (or when the holder's lease expires, if the
 *    backend says when), with backoff while the coordinator does not answer.
 * 2. Taken, with a fencing token: bind each scheduler with the token, start it.
 * 3. Renew every `renewMs`. A renewal that fails or finds the lease gone loses it: the schedulers
 *    are stopped with a signal that aborts when the lease expires at the latest (the time of the
 *    last successful renewal's request plus `ttlMs`: no other replica can take the lease before),
 *    the lease is released (when the coordinator still answers), and the runner goes back to 1.
 *
 * `stop(scheduler)` is a scheduler's shutdown hook; once every scheduler stopped, the lease is
 * released at once, so another replica takes over without waiting for it to expire.
 */
export class LeaseRunner {
  readonly #o: LeaseRunnerOptions;
  /** Not yet stopped by the shutdown. */
  readonly #active: Set<Scheduler>;
  /** Started under the current holding of the lease, in start order. */
  #started: Scheduler[] = [];
  #closed = false;
  #loop: Promise<void> = Promise.resolve();
  #wake: () => void = () => {};

  constructor(options: LeaseRunnerOptions) {
    this.#o = options;
    this.#active = new Set(options.schedulers);
  }

  /** Whether `scheduler` is one of the lease-based schedulers. */
  has(scheduler: Scheduler): boolean {
    return this.#o.schedulers.includes(scheduler);
  }

  start(): void {
    this.#loop = this.#run().catch((error: unknown) => this.#o.logger.error({ err: error }, 'lease runner failed'));
  }

  /** Stops `scheduler` if it runs here, and never starts it again; the last one closes the runner. */
  async stop(scheduler: Scheduler, signal: AbortSignal): Promise<void> {
    this.#active.delete(scheduler);
    const index = this.#started.indexOf(scheduler);
    if (index !== -1) {
      this.#started.splice(index, 1);
      await scheduler.stop(signal);
    }
    if (this.#active.size === 0) await this.close();
  }

  /** Ends the runner: the schedulers still running stop, the lease is released. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { coordinator, renewMs, logger } = this.#o;
    let failures = 0;
    while (!this.#closed) {
      const sentAt = performance.now();
      try {
        const attempt = await coordinator.acquireLease();
        failures = 0;
        if (attempt.held) await this.#hold(attempt.token, sentAt);
        else await this.#sleep(Math.min(Math.max(attempt.retryInMs, 10), renewMs));
      } catch (error) {
        logger.debug({ error: describeError(error) }, 'could not take the lease');
        // an answer lost on the way may have given this replica the lease: give it back
        await coordinator.releaseLease().catch(() => {});
        await this.#sleep(backoffMs(failures++, renewMs));
      }
    }
  }

  /** The lease is held from `sentAt` (when the request that took it was sent): run the schedulers until it is lost or closed. */
  async #hold(token: number, sentAt: number): Promise<void> {
    const { coordinator, ttlMs, renewMs, logger } = this.#o;
    let expiresAt = sentAt + ttlMs;
    this.#o.held(true);
    logger.info({ token, schedulers: this.#active.size }, 'lease taken: starting the lease-based schedulers');
    await this.#startAll(token);
    let lost: unknown;
    while (!this.#closed && lost === undefined) {
      await this.#sleep(renewMs);
      if (this.#closed) break;
      const sent = performance.now();
      try {
        if (await coordinator.renewLease()) expiresAt = sent + ttlMs;
        else lost = new Error('the lease is no longer this replica’s (it expired, or another replica holds it)');
      } catch (error) {
        lost = error;
      }
    }
    this.#o.held(false);
    const leftMs = Math.max(0, Math.round(expiresAt - performance.now()));
    if (lost !== undefined)
      logger.warn({ token, error: describeError(lost), leftMs }, 'lease lost: stopping the lease-based schedulers before it expires');
    const running = this.#started.reverse();
    this.#started = [];
    await Promise.all(running.map((s) => this.#stopOne(s, AbortSignal.timeout(leftMs))));
    await coordinator.releaseLease().catch(() => {});
    logger.info({ token, stoppedInTime: performance.now() <= expiresAt }, 'lease given up: lease-based schedulers stopped');
  }

  async #startAll(token: number): Promise<void> {
    const env: SchedulerEnv = { ...this.#o.env, fencingToken: token };
    for (const scheduler of this.#o.schedulers) {
      if (this.#closed || !this.#active.has(scheduler)) continue;
      try {
        scheduler.bind?.(env);
        this.#started.push(scheduler);
        await scheduler.start();
      } catch (error) {
        this.#o.logger.error({ err: error, token }, 'a lease-based scheduler failed to start');
      }
    }
  }

  async #stopOne(scheduler: Scheduler, signal: AbortSignal): Promise<void> {
    try {
      await scheduler.stop(signal);
    } catch (error) {
      this.#o.logger.error({ err: error }, 'a lease-based scheduler failed to stop');
    }
  }

  /** Waits `ms`, or less when the runner closes. */
  #sleep(ms: number): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }
}
