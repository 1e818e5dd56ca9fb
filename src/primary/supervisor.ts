import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { describeInvalid, isFlotillaMessage, isWorkerMessage, msg, type WorkerMessage } from '../ipc/protocol.ts';
import { Backoff, type BackoffPolicy } from './backoff.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';

export interface SupervisorOptions {
  count: number;
  /** The worker entry module. */
  exec: string;
  /** Environment of the worker in a slot (the start-up data). */
  envFor(slot: number): Record<string, string>;
  policy: BackoffPolicy;
  startupTimeoutMs: number;
  /** A retiring worker gets this long to shut down (plus a margin) before SIGKILL. */
  shutdownBudgetMs: number;
  logger: Logger;
  metrics: PrimaryMetrics;
  /** Too many failures in the window: the primary gives up. */
  onCrashLoop(): void;
  /** Every message from a worker that the supervisor itself does not handle. */
  onMessage(worker: Worker, message: WorkerMessage): void;
  /** The first worker is listening. */
  onFirstListening(address: { host: string; port: number }): void;
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
 * Keeps `count` workers alive: forks them, counts a worker as up once it
 * listens, replaces one that exits unexpectedly with exponential backoff, and
 * reports a crash loop. Once `stopRestarting()` is called, exits are final.
 */
export class Supervisor {
  readonly #o: SupervisorOptions;
  readonly #backoff: Backoff;
  readonly #slots: Slot[];
  /** Every live worker and its slot: the slot's current worker, a replacement starting, or one retiring. */
  readonly #owners = new Map<Worker, Slot>();
  /** Replacements started by `replace()`, until they listen or exit. */
  readonly #starting = new Map<Worker, (listening: boolean) => void>();
  readonly #retiring = new Set<Worker>();
  #restarting = true;
  #announced = false;
  #allExited = Promise.withResolvers<void>();
  /** Workers that exited during shutdown with a non-zero code or by a signal. */
  uncleanExits = 0;

  constructor(options: SupervisorOptions) {
    this.#o = options;
    this.#backoff = new Backoff(options.policy);
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
    cluster.setupPrimary({ exec: this.#o.exec });
    cluster.on('message', (worker, message: unknown) => this.#onMessage(worker, message));
    this.#o.metrics.workersDesired.set(this.#o.count);
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
   */
  async replace(index: number): Promise<boolean> {
    const slot = this.#slots[index];
    if (slot === undefined || !this.#restarting) return false;
    const old = slot.worker;
    const fresh = this.#spawn(slot);
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
    slot.up = true;
    slot.upSince = Date.now();
    slot.failure = undefined;
    this.#o.metrics.workersUp.set(this.upWorkers.length);
    this.#o.logger.info({ slot: index, workerPid: fresh.process.pid }, 'worker listening');
    if (old !== undefined) await this.#retire(old);
    return true;
  }

  stopRestarting(): void {
    this.#restarting = false;
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

  #spawn(slot: Slot): Worker {
    const worker = cluster.fork(this.#o.envFor(slot.index));
    this.#owners.set(worker, slot);
    worker.once('exit', (code, signal) => this.#onExit(slot, worker, code, signal));
    return worker;
  }

  /** Shuts an old worker down gracefully; SIGKILL once its budget (plus a margin) is spent. */
  async #retire(worker: Worker): Promise<void> {
    if (worker.isDead()) return;
    this.#retiring.add(worker);
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

  #onMessage(worker: Worker, message: unknown): void {
    if (!isWorkerMessage(message)) {
      if (isFlotillaMessage(message))
        this.#o.logger.warn({ workerPid: worker.process.pid, message: describeInvalid(message) }, 'malformed worker message dropped');
      return;
    }
    this.#o.onMessage(worker, message);
    if (message.type === 'flotilla:listening') this.#starting.get(worker)?.(true);
    // The worker has closed its listener and run its hooks; disconnecting it after every message we sent it lets it exit.
    if (message.type === 'flotilla:shutdown-complete' && worker.isConnected()) worker.disconnect();
    const slot = this.#slots.find((s) => s.worker === worker);
    if (message.type === 'flotilla:listening' && slot !== undefined) {
      clearTimeout(slot.startupTimer);
      slot.up = true;
      slot.upSince = Date.now();
      this.#o.metrics.workersUp.set(this.upWorkers.length);
      this.#o.logger.info({ slot: slot.index, workerPid: message.pid, address: message.address }, 'worker listening');
      if (!this.#announced) {
        this.#announced = true;
        this.#o.onFirstListening(message.address);
      }
    } else if (message.type === 'flotilla:fatal' && slot !== undefined) {
      slot.failure = 'uncaught-exception';
    }
  }

  #onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    this.#owners.delete(worker);
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
    if (!this.#restarting) {
      if (code !== 0) this.uncleanExits++;
      this.#o.logger.info({ slot: slot.index, workerPid, code, signal }, 'worker exited');
      this.#checkAllExited();
      return;
    }
    const reason =
      slot.failure ?? (signal !== null ? `killed-${signal}` : !wasUp ? 'boot-failure' : code === 0 ? 'unexpected-exit' : 'crash');
    const { delayMs, crashLoop } = this.#backoff.fail(Date.now(), wasUp ? Date.now() - slot.upSince : 0);
    if (crashLoop) {
      this.#o.logger.fatal({ slot: slot.index, workerPid, code, signal, reason }, 'workers keep failing: giving up (crash loop)');
      this.#o.onCrashLoop();
      return;
    }
    this.#o.metrics.restarts.inc({ reason });
    this.#o.logger.warn({ slot: slot.index, workerPid, code, signal, reason, delayMs }, 'worker exited unexpectedly: replacing it');
    slot.restartTimer = setTimeout(() => this.#fork(slot), delayMs);
  }

  #checkAllExited(): void {
    if (!this.#restarting && this.#owners.size === 0) this.#allExited.resolve();
  }
}
