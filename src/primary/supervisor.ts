import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { describeInvalid, isFlotillaMessage, isWorkerMessage, type WorkerMessage } from '../ipc/protocol.ts';
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

  /** Workers alive (starting or up). */
  get liveWorkers(): Worker[] {
    return this.#slots.flatMap((s) => (s.worker === undefined ? [] : [s.worker]));
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

  #fork(slot: Slot): void {
    slot.restartTimer = undefined;
    slot.up = false;
    slot.failure = undefined;
    const worker = cluster.fork(this.#o.envFor(slot.index));
    slot.worker = worker;
    slot.startupTimer = setTimeout(() => {
      slot.failure = 'startup-timeout';
      this.#o.logger.error(
        { slot: slot.index, workerPid: worker.process.pid, timeoutMs: this.#o.startupTimeoutMs },
        'worker did not start listening in time: killing it',
      );
      worker.process.kill('SIGKILL');
    }, this.#o.startupTimeoutMs);
    worker.once('exit', (code, signal) => this.#onExit(slot, worker, code, signal));
  }

  #onMessage(worker: Worker, message: unknown): void {
    if (!isWorkerMessage(message)) {
      if (isFlotillaMessage(message))
        this.#o.logger.warn({ workerPid: worker.process.pid, message: describeInvalid(message) }, 'malformed worker message dropped');
      return;
    }
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
    this.#o.onMessage(worker, message);
  }

  #onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    clearTimeout(slot.startupTimer);
    const wasUp = slot.up;
    slot.worker = undefined;
    slot.up = false;
    this.#o.metrics.workersUp.set(this.upWorkers.length);
    const workerPid = worker.process.pid;
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
    if (!this.#restarting && this.#slots.every((s) => s.worker === undefined)) this.#allExited.resolve();
  }
}
