import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { describeInvalid, isFlotillaMessage, isWorkerMessage, msg, type PongMessage, type WorkerMessage } from '../ipc/protocol.ts';
import { Backoff, type BackoffPolicy } from './backoff.ts';
import { exitReason } from './exit-reason.ts';
import { Heartbeat, type HeartbeatPolicy } from './heartbeat.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';
import { type RecyclePolicy, type RecycleReason, Recycling } from './recycling.ts';

export interface SupervisorOptions {
  count: number;
  /** The worker entry module. */
  exec: string;
  /** Node flags of every worker (the primary's own, plus the heap share). */
  execArgv: readonly string[];
  /** Who hands connections to the workers: the primary (round robin) or the kernel. */
  balancing: 'primary' | 'kernel';
  /** Environment of the worker in a slot (the start-up data). */
  envFor(slot: number): Record<string, string>;
  policy: BackoffPolicy;
  heartbeat: HeartbeatPolicy;
  recycle: RecyclePolicy;
  startupTimeoutMs: number;
  /** A retiring worker gets this long to shut down (plus a margin) before SIGKILL. */
  shutdownBudgetMs: number;
  logger: Logger;
  metrics: PrimaryMetrics;
  /** Too many early failures in the window: the primary gives up. */
  onCrashLoop(): void;
  /** Every message from a worker that the supervisor itself does not handle. */
  onMessage(worker: Worker, message: WorkerMessage): void;
  /** The first worker is listening. */
  onFirstListening(address: { host: string; port: number }): void;
  /** A worker process was forked (its metrics count as missing until its first snapshot). */
  onFork(worker: Worker): void;
  /** A worker process is gone, whatever the reason (its last metrics stay in the sums). */
  onExit(worker: Worker): void;
}

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  up: boolean;
  upSince: number;
  failure: string | undefined;
  startupTimer: NodeJS.Timeout | undefined;
  restartTimer: NodeJS.Timeout | undefined;
}

/**
 * Keeps `count` workers alive, in slots: forks them, counts a worker as up
 * once it listens, watches it with heartbeats, and replaces it when it exits
 * unexpectedly (with exponential backoff), stops answering (at once, then
 * kills it), fails to fork (retried with backoff), or outgrows its memory or
 * request budget (gracefully, the replacement listening first). Reports a
 * crash loop when workers keep dying early. Once `stopRestarting()` is
 * called, exits are final.
 */
export class Supervisor {
  readonly #o: SupervisorOptions;
  readonly #backoff: Backoff;
  readonly #heartbeat: Heartbeat<Worker>;
  readonly #recycling: Recycling<Worker>;
  readonly #slots: Slot[];
  /** Every live worker and its slot: the slot's current worker, a replacement starting, or one retiring. */
  readonly #owners = new Map<Worker, Slot>();
  /** Replacements started by `replace()`, until they listen or exit. */
  readonly #starting = new Map<Worker, (listening: boolean) => void>();
  readonly #retiring = new Set<Worker>();
  /** Graceful replacements run one at a time (rolling restart, recycling). */
  #replacing: Promise<unknown> = Promise.resolve();
  #restarting = true;
  #announced = false;
  #allExited = Promise.withResolvers<void>();
  /** Workers that exited during shutdown with a non-zero code or by a signal. */
  uncleanExits = 0;

  constructor(options: SupervisorOptions) {
    this.#o = options;
    this.#backoff = new Backoff(options.policy);
    this.#recycling = new Recycling(options.recycle);
    this.#heartbeat = new Heartbeat(options.heartbeat, {
      ping: (worker, seq) => worker.send(msg.ping(seq)),
      stuck: (worker, silentMs) => this.#stuck(worker, silentMs),
      age: (worker, silentMs) => {
        const slot = this.#owners.get(worker);
        if (slot !== undefined) options.metrics.heartbeatAge(slot.index, silentMs);
      },
    });
    this.#slots = Array.from({ length: options.count }, (_, index) => ({
      index,
      worker: undefined,
      up: false,
      upSince: 0,
      failure: undefined,
      startupTimer: undefined,
      restartTimer: undefined,
    }));
  }

  start(): void {
    cluster.schedulingPolicy = this.#o.balancing === 'kernel' ? cluster.SCHED_NONE : cluster.SCHED_RR;
    cluster.setupPrimary({ exec: this.#o.exec, execArgv: [...this.#o.execArgv] });
    cluster.on('message', (worker, message: unknown) => this.#onMessage(worker, message));
    this.#o.metrics.workersDesired.set(this.#o.count);
    this.#heartbeat.start();
    for (const slot of this.#slots) this.#fork(slot);
  }

  /** Workers that are listening. */
  get upWorkers(): Worker[] {
    return this.#slots.flatMap((s) => (s.up && s.worker?.isConnected() ? [s.worker] : []));
  }

  /** Workers alive (starting, up, or retiring). */
  get liveWorkers(): Worker[] {
    return [...this.#owners.keys()];
  }

  /**
   * Replaces the worker of one slot without a gap: starts a new one, and once
   * it listens, retires the old one through its graceful shutdown. Resolves
   * `false` (keeping the old worker) when the new one does not come up.
   * Replacements run one at a time.
   */
  replace(index: number): Promise<boolean> {
    const next = this.#replacing.then(() => this.#replace(index));
    this.#replacing = next.catch(() => false);
    return next;
  }

  stopRestarting(): void {
    this.#restarting = false;
    this.#heartbeat.stop();
    for (const slot of this.#slots) {
      clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
    }
    this.#checkAllExited();
  }

  /** Resolves when no worker is alive (after `stopRestarting()`). */
  allExited(): Promise<void> {
    return this.#allExited.promise;
  }

  kill(signal: NodeJS.Signals): void {
    for (const worker of this.liveWorkers) worker.process.kill(signal);
  }

  async #replace(index: number): Promise<boolean> {
    const slot = this.#slots[index];
    if (slot === undefined || !this.#restarting) return false;
    const old = slot.worker;
    const fresh = this.#spawn(slot);
    if (fresh === undefined) return false;
    const listening = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.#o.startupTimeoutMs);
      this.#starting.set(fresh, (ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
    });
    this.#starting.delete(fresh);
    if (!listening || !this.#restarting) {
      this.#o.logger.error({ slot: index, workerPid: fresh.process.pid }, 'replacement worker did not come up: keeping the old one');
      fresh.process.kill('SIGKILL');
      return false;
    }
    if (slot.worker !== old) {
      // the slot's worker died and was replaced by the supervisor meanwhile: the new one is surplus
      await this.#retire(fresh);
      return false;
    }
    clearTimeout(slot.startupTimer);
    clearTimeout(slot.restartTimer);
    slot.worker = fresh;
    this.#markUp(slot, fresh);
    if (old !== undefined) await this.#retire(old);
    return true;
  }

  /** A worker's process, owned by `slot`; undefined when it could not be forked (counted and retried). */
  #spawn(slot: Slot): Worker | undefined {
    let worker: Worker;
    try {
      worker = cluster.fork(this.#o.envFor(slot.index));
    } catch (error) {
      // synchronous spawn errors (E2BIG, say); EACCES, EAGAIN, ENOENT… come as an 'error' event below
      this.#forkFailed(slot, undefined, error);
      return undefined;
    }
    this.#owners.set(worker, slot);
    this.#o.onFork(worker);
    worker.once('exit', (code, signal) => this.#onExit(slot, worker, code, signal));
    worker.on('error', (error) => {
      // a process that never started has no pid and emits no 'exit'
      if (worker.process.pid === undefined) this.#forkFailed(slot, worker, error);
      else this.#o.logger.warn({ err: error, slot: slot.index, workerPid: worker.process.pid }, 'worker channel error');
    });
    return worker;
  }

  /** Shuts an old worker down gracefully; SIGKILL once its budget (plus a margin) is spent. */
  async #retire(worker: Worker): Promise<void> {
    if (worker.isDead()) return;
    this.#retiring.add(worker);
    this.#heartbeat.unwatch(worker);
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    try {
      worker.send(msg.shutdown(Date.now() + this.#o.shutdownBudgetMs));
    } catch {
      worker.process.kill('SIGKILL');
    }
    const timer = setTimeout(() => worker.process.kill('SIGKILL'), this.#o.shutdownBudgetMs + 250);
    await exited;
    clearTimeout(timer);
  }

  #fork(slot: Slot): void {
    slot.restartTimer = undefined;
    slot.up = false;
    slot.failure = undefined;
    const worker = this.#spawn(slot);
    if (worker === undefined) return;
    slot.worker = worker;
    slot.startupTimer = setTimeout(() => {
      slot.failure = 'startup-timeout';
      this.#o.logger.error(
        { slot: slot.index, workerPid: worker.process.pid, timeoutMs: this.#o.startupTimeoutMs },
        'worker did not start listening in time: killing it',
      );
      worker.process.kill('SIGKILL');
    }, this.#o.startupTimeoutMs);
  }

  #markUp(slot: Slot, worker: Worker, address?: { host: string; port: number }): void {
    slot.up = true;
    slot.upSince = Date.now();
    slot.failure = undefined;
    this.#heartbeat.watch(worker);
    this.#o.metrics.workersUp.set(this.upWorkers.length);
    this.#o.logger.info({ slot: slot.index, workerPid: worker.process.pid, address }, 'worker listening');
  }

  #onMessage(worker: Worker, message: unknown): void {
    if (!isWorkerMessage(message)) {
      if (isFlotillaMessage(message))
        this.#o.logger.warn({ workerPid: worker.process.pid, message: describeInvalid(message) }, 'malformed worker message dropped');
      return;
    }
    const slot = this.#owners.get(worker);
    switch (message.type) {
      case 'flotilla:pong':
        this.#onPong(worker, message);
        return;
      case 'flotilla:listening':
        this.#starting.get(worker)?.(true);
        if (slot?.worker === worker) {
          clearTimeout(slot.startupTimer);
          this.#markUp(slot, worker, message.address);
          if (!this.#announced) {
            this.#announced = true;
            this.#o.onFirstListening(message.address);
          }
        }
        break;
      case 'flotilla:shutdown-complete':
        // The worker has closed its listener and run its hooks; disconnecting it after every message we sent it lets it exit.
        if (worker.isConnected()) worker.disconnect();
        break;
      case 'flotilla:fatal':
        if (slot?.worker === worker) slot.failure = 'uncaught-exception';
        break;
      case 'flotilla:boot-failed':
        if (slot?.worker === worker) slot.failure = 'boot-failure';
        break;
    }
    this.#o.onMessage(worker, message);
  }

  #onPong(worker: Worker, pong: PongMessage): void {
    this.#heartbeat.answered(worker);
    const slot = this.#owners.get(worker);
    if (slot?.worker !== worker) return;
    this.#o.metrics.observeWorker(slot.index, {
      elu: pong.elu,
      delayP50Ms: pong.delayP50Ms,
      delayP99Ms: pong.delayP99Ms,
      delayMaxMs: pong.delayMaxMs,
      rssBytes: pong.rss,
    });
    const reason = this.#restarting && slot.up ? this.#recycling.check(worker, pong) : undefined;
    if (reason !== undefined) this.#recycle(slot, worker, reason, pong);
  }

  /** Replaces a healthy worker that outgrew its budget, gracefully (the same path as a rolling restart). */
  #recycle(slot: Slot, worker: Worker, reason: RecycleReason, pong: PongMessage): void {
    const limits = { maxMemoryMB: this.#o.recycle.maxMemoryMB, requestLimit: this.#recycling.limitOf(worker) };
    this.#o.logger.warn(
      { slot: slot.index, workerPid: worker.process.pid, reason, rss: pong.rss, requests: pong.requests, ...limits },
      'recycling a worker: its replacement listens first',
    );
    this.#o.metrics.restarts.inc({ reason });
    void this.replace(slot.index).then((ok) => {
      if (!ok && slot.worker === worker)
        this.#o.logger.error({ slot: slot.index, reason }, 'recycling failed: the old worker keeps serving');
    });
  }

  /** No heartbeat answered for `heartbeatTimeoutMs`: start the replacement, then kill the stuck worker. */
  #stuck(worker: Worker, silentMs: number): void {
    const slot = this.#owners.get(worker);
    if (slot?.worker !== worker || !this.#restarting) return;
    const workerPid = worker.process.pid;
    this.#o.logger.error(
      { slot: slot.index, workerPid, silentMs, reason: 'heartbeat-timeout' },
      'worker stopped answering heartbeats (event loop stuck): starting a replacement, then killing it',
    );
    this.#o.metrics.restarts.inc({ reason: 'heartbeat-timeout' });
    const { crashLoop } = this.#backoff.fail(Date.now(), Date.now() - slot.upSince);
    this.#retiring.add(worker);
    slot.worker = undefined;
    slot.up = false;
    this.#o.metrics.workersUp.set(this.upWorkers.length);
    if (crashLoop) this.#giveUp(slot, { workerPid, reason: 'heartbeat-timeout' });
    else this.#fork(slot);
    worker.process.kill('SIGKILL');
  }

  #forkFailed(slot: Slot, worker: Worker | undefined, error: unknown): void {
    if (worker !== undefined) this.#owners.delete(worker);
    this.#starting.get(worker as Worker)?.(false);
    if (slot.worker === worker) {
      clearTimeout(slot.startupTimer);
      slot.worker = undefined;
      slot.up = false;
    }
    if (slot.worker !== undefined || !this.#restarting) {
      this.#checkAllExited();
      return;
    }
    // while other workers serve, a fork failure (a full pids cgroup, say) is retried for as long as it lasts
    const serving = this.upWorkers.length > 0;
    const { delayMs, crashLoop } = this.#backoff.fail(Date.now(), serving ? Number.POSITIVE_INFINITY : 0);
    const code = (error as NodeJS.ErrnoException)?.code;
    if (crashLoop) {
      this.#giveUp(slot, { reason: 'fork-failed', code });
      return;
    }
    this.#o.metrics.restarts.inc({ reason: 'fork-failed' });
    this.#o.logger.error({ err: error, slot: slot.index, code, reason: 'fork-failed', delayMs }, 'could not fork a worker: retrying');
    slot.restartTimer = setTimeout(() => this.#fork(slot), delayMs);
  }

  #onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    this.#owners.delete(worker);
    this.#heartbeat.unwatch(worker);
    this.#o.onExit(worker);
    const workerPid = worker.process.pid;
    if (this.#retiring.delete(worker) || this.#starting.has(worker) || slot.worker !== worker) {
      this.#starting.get(worker)?.(false);
      this.#o.logger.info({ slot: slot.index, workerPid, code, signal }, 'worker retired');
      this.#checkAllExited();
      return;
    }
    clearTimeout(slot.startupTimer);
    const wasUp = slot.up;
    slot.worker = undefined;
    slot.up = false;
    this.#o.metrics.workersUp.set(this.upWorkers.length);
    this.#o.metrics.forgetWorker(slot.index);
    if (!this.#restarting) {
      if (code !== 0) this.uncleanExits++;
      this.#o.logger.info({ slot: slot.index, workerPid, code, signal }, 'worker exited');
      this.#checkAllExited();
      return;
    }
    const { reason, likelyCause } = exitReason({ failure: slot.failure, code, signal, wasUp });
    const { delayMs, crashLoop } = this.#backoff.fail(Date.now(), wasUp ? Date.now() - slot.upSince : 0);
    if (crashLoop) {
      this.#giveUp(slot, { workerPid, code, signal, reason });
      return;
    }
    this.#o.metrics.restarts.inc({ reason });
    this.#o.logger.warn(
      { slot: slot.index, workerPid, code, signal, reason, likelyCause, delayMs },
      'worker exited unexpectedly: replacing it',
    );
    slot.restartTimer = setTimeout(() => this.#fork(slot), delayMs);
  }

  #giveUp(slot: Slot, fields: Record<string, unknown>): void {
    this.#o.logger.fatal({ slot: slot.index, ...fields }, 'workers keep failing early: giving up (crash loop)');
    this.#o.onCrashLoop();
  }

  #checkAllExited(): void {
    if (!this.#restarting && this.#owners.size === 0) this.#allExited.resolve();
  }
}
