import cluster, { type Worker } from 'node:cluster';
import {
  describeInvalid,
  type FatalMessage,
  type FirstRequestMessage,
  isFlotillaMessage,
  isWorkerMessage,
  msg,
  type PongMessage,
  type WorkerRoutes,
} from '../ipc/protocol.ts';
import { exitReason } from './exit-reason.ts';
import type { RecycleReason } from './recycling.ts';
import { RestartPolicy } from './restart-policy.ts';
import { emptySlots, resizeSlots, type Slot } from './slot.ts';
import type { SupervisorOptions } from './supervisor-options.ts';
import { adoptWorker, type ForkHandlers, forkWorker, ListeningWaits, retireWorker } from './worker-process.ts';
import { WorkerRequests } from './worker-requests.ts';
import { WorkerWatch } from './worker-watch.ts';

export type { SupervisorOptions } from './supervisor-options.ts';

/**
 * Keeps `count` workers alive, in slots: forks them, counts a worker as up
 * once it listens, watches it with heartbeats, and replaces it when it exits
 * unexpectedly (with exponential backoff), stops answering (at once, then
 * kills it), fails to fork (retried with backoff), or outgrows its memory or
 * request budget (gracefully, the replacement listening first). Reports a
 * crash loop when workers keep failing to boot; a worker that received
 * requests and died is replaced, never counted towards it (see `backoff.ts`).
 * Once `stopRestarting()` is called, exits are final.
 */
export class Supervisor {
  #o: SupervisorOptions;
  /** The worker forked before the config was read, until the first slot's first start takes it. */
  #early: Worker | undefined;
  readonly #restarts: RestartPolicy;
  readonly #watch: WorkerWatch;
  /** Whether each worker received requests, and the routes it was serving: what its death is blamed on. */
  readonly #requests = new WorkerRequests<Worker>();
  readonly #slots: Slot[];
  /** Every live worker and its slot: the slot's current worker, a replacement starting, or one retiring. */
  readonly #owners = new Map<Worker, Slot>();
  readonly #retiring = new Set<Worker>();
  /** Replacements and added workers awaited until they listen (`listening` tells it). */
  readonly #listens = new ListeningWaits();
  /** Graceful changes run one at a time (rolling restart, recycling, resizing): the last one asked for. */
  #replacing: Promise<unknown> = Promise.resolve();
  #restarting = true;
  /** `start()` forked the first workers: until then a replacement or a resize forks nothing (start forks on the config current then). */
  #started = false;
  /** The service's `beforeServe` hooks ran in the primary (`serve()`): a worker that awaits them listens at once. */
  #serving = false;
  /** Workers whose service has `beforeServe` hooks, waiting for `serve()` (their start-up timeout paused). */
  readonly #awaiting = new Set<Worker>();
  #announced = false;
  #allExited = Promise.withResolvers<void>();
  /** Workers that exited during shutdown with a non-zero code or by a signal. */
  uncleanExits = 0;

  constructor(options: SupervisorOptions) {
    this.#o = options;
    this.#early = options.early;
    this.#restarts = new RestartPolicy(options.policy, options.logger, options.metrics, () => options.onCrashLoop());
    this.#watch = new WorkerWatch({
      heartbeat: options.heartbeat,
      recycle: options.recycle,
      metrics: options.metrics,
      slotOf: (worker) => {
        const slot = this.#owners.get(worker);
        return slot?.worker === worker ? slot.index : undefined;
      },
      stuck: (worker, silentMs) => this.#stuck(worker, silentMs),
      outgrown: (worker, reason, details) => this.#recycle(worker, reason, details),
    });
    this.#slots = emptySlots(options.count);
  }

  start(): void {
    this.#started = true;
    // kernel: the workers share one listening socket (SCHED_NONE), each accepting from its queue; with primary,
    // the app's connections come from the Distributor. Any other listener of the service is shared so in both
    // modes: the policy is fixed at the first fork, which may be the early worker's (early-worker.ts)
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    cluster.setupPrimary({ exec: this.#o.exec, execArgv: [...this.#o.execArgv] });
    cluster.on('message', (worker, message: unknown) => this.#onMessage(worker, message));
    this.#o.metrics.workersDesired.set(this.#o.count);
    this.#watch.start();
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
    return this.#inTurn(() => this.#replace(index));
  }

  /** Slots kept alive. */
  get count(): number {
    return this.#slots.length;
  }

  /**
   * Grows or shrinks the cluster to `count` slots without touching the others:
   * new slots fork at once; the workers of the slots beyond `count` retire
   * gracefully (in-flight requests finish within the shutdown budget).
   * Resolves once the new workers listen (or failed to) and the retired ones
   * are gone. Runs in turn with the graceful replacements.
   */
  resize(count: number): Promise<void> {
    return this.#inTurn(() => this.#resize(count));
  }

  /** Runs `change` once the graceful changes asked before it are done: one at a time, a failure stopping none. */
  #inTurn<T>(change: () => Promise<T>): Promise<T> {
    const next = this.#replacing.then(change);
    this.#replacing = next.catch(() => {});
    return next;
  }

  /** Later retirements use this budget (the config's `shutdown.timeoutMs` after a reload). */
  setShutdownBudget(ms: number): void {
    this.#o = { ...this.#o, shutdownBudgetMs: ms };
  }

  stopRestarting(): void {
    this.#restarting = false;
    this.#watch.stop();
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
    // a reload before the first workers were forked: they will start on the new config
    if (!this.#started) return true;
    const old = slot.worker;
    const fresh = this.#spawn(slot);
    if (fresh === undefined) return false;
    const listening = await this.#listens.untilListening(fresh, this.#o.startupTimeoutMs);
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

  async #resize(count: number): Promise<void> {
    if (!this.#restarting || count === this.#slots.length) return;
    const { added, removed } = resizeSlots(this.#slots, count);
    this.#o.metrics.workersDesired.set(count);
    for (const slot of removed) this.#o.metrics.forgetWorker(slot.index);
    if (!this.#started) return;
    for (const slot of added) this.#fork(slot);
    const settled = [
      ...removed.map((slot) => (slot.worker === undefined ? undefined : this.#retire(slot.worker))),
      ...added.map((slot) => (slot.worker === undefined ? undefined : this.#listens.untilListening(slot.worker, this.#o.startupTimeoutMs))),
    ];
    await Promise.all(settled);
    this.#o.metrics.workersUp.set(this.upWorkers.length);
  }

  /** A worker's process, owned by `slot`; undefined when it could not be forked (counted and retried). */
  #spawn(slot: Slot): Worker | undefined {
    // a synchronous fork failure calls forkFailed before the assignment: `worker` is still undefined then
    let worker: Worker | undefined;
    const on: ForkHandlers = {
      exit: (code, signal) => this.#onExit(slot, worker as Worker, code, signal),
      forkFailed: (error) => this.#forkFailed(slot, worker, error),
      channelError: (err) => this.#o.logger.warn({ err, slot: slot.index, workerPid: worker?.process.pid }, 'worker channel error'),
    };
    const early = this.#early;
    this.#early = undefined;
    const start = this.#o.startFor(slot.index);
    worker = early === undefined ? forkWorker(start, on) : adoptWorker(early, start, on);
    if (worker === undefined) return undefined;
    this.#owners.set(worker, slot);
    this.#o.onFork(worker);
    return worker;
  }

  /** Shuts an old worker down gracefully (see `retireWorker`); its exit is then no failure. */
  async #retire(worker: Worker): Promise<void> {
    if (worker.isDead()) return;
    this.#retiring.add(worker);
    this.#watch.unwatch(worker);
    this.#o.onRetire?.(worker);
    await retireWorker(worker, this.#o.shutdownBudgetMs);
  }

  #fork(slot: Slot): void {
    slot.restartTimer = undefined;
    slot.up = false;
    slot.failure = undefined;
    const worker = this.#spawn(slot);
    if (worker === undefined) return;
    slot.worker = worker;
    this.#armStartup(slot, worker);
  }

  #armStartup(slot: Slot, worker: Worker): void {
    clearTimeout(slot.startupTimer);
    slot.startupTimer = setTimeout(() => {
      slot.failure = 'startup-timeout';
      this.#o.logger.error(
        { slot: slot.index, workerPid: worker.process.pid, timeoutMs: this.#o.startupTimeoutMs },
        'worker did not start listening in time: killing it',
      );
      worker.process.kill('SIGKILL');
    }, this.#o.startupTimeoutMs);
  }

  /**
   * The service's `beforeServe` hooks ran in the primary's service thread: the workers that await them
   * listen now (their start-up timeout starts again), and those that ask later at once.
   */
  serve(): void {
    this.#serving = true;
    for (const worker of this.#awaiting) this.#serveWorker(worker);
    this.#awaiting.clear();
  }

  #serveWorker(worker: Worker): void {
    const slot = this.#owners.get(worker);
    if (slot?.worker === worker && !slot.up) this.#armStartup(slot, worker);
    try {
      if (worker.isConnected()) worker.send(msg.serve());
    } catch {
      // a worker whose channel closed is on its way out: its exit is handled as any other
    }
  }

  #markUp(slot: Slot, worker: Worker, address?: { host: string; port: number }): void {
    slot.up = true;
    slot.upSince = Date.now();
    slot.failure = undefined;
    this.#watch.watch(worker);
    this.#o.onUp?.(worker);
    this.#o.metrics.workersUp.set(this.upWorkers.length);
    this.#o.logger.info({ slot: slot.index, workerPid: worker.process.pid, address }, 'worker listening');
  }

  #onMessage(worker: Worker, message: unknown): void {
    if (!isWorkerMessage(message)) {
      if (isFlotillaMessage(message))
        this.#o.logger.warn({ workerPid: worker.process.pid, message: describeInvalid(message) }, 'malformed worker message dropped');
      return;
    }
    this.#o.dispatch(message, worker);
  }

  /** The supervisor's part of a worker's `flotilla:pong`: it received requests, serves routes, is alive and within its budget. */
  answered(worker: Worker, pong: PongMessage): void {
    this.#requests.heard(worker, pong);
    this.#watch.answered(worker, pong, this.#restarting && this.#owners.get(worker)?.up === true);
  }

  /** The supervisor's part of `flotilla:first-request`: the worker's death is no boot failure from now on. */
  firstRequest(worker: Worker, message: FirstRequestMessage): void {
    this.#requests.heard(worker, message);
  }

  /** The supervisor's part of `flotilla:listening`: the worker is up (the first one announces the cluster). */
  listening(worker: Worker, address: { host: string; port: number }): void {
    const slot = this.#owners.get(worker);
    if (slot?.worker === worker) {
      clearTimeout(slot.startupTimer);
      this.#markUp(slot, worker, address);
    }
    // a replacement counts too: a reload during the start-up can bring the first worker that listens
    if (!this.#announced && slot !== undefined) {
      this.#announced = true;
      this.#o.onFirstListening(address);
    }
    this.#listens.listening(worker);
  }

  /** The supervisor's part of `flotilla:shutdown-complete`. */
  shutdownComplete(worker: Worker): void {
    // The worker has closed its listener and run its hooks; disconnecting it after every message we sent it lets it exit.
    if (worker.isConnected()) worker.disconnect();
  }

  /** The supervisor's part of `flotilla:fatal`: the routes it died serving, and why its slot failed. */
  fatal(worker: Worker, message: FatalMessage): void {
    this.#requests.heard(worker, message);
    const slot = this.#owners.get(worker);
    if (slot?.worker === worker) slot.failure = 'uncaught-exception';
  }

  /** The supervisor's part of `flotilla:boot-failed`: why its slot failed. */
  bootFailed(worker: Worker): void {
    const slot = this.#owners.get(worker);
    if (slot?.worker === worker) slot.failure = 'boot-failure';
  }

  /** The supervisor's part of `flotilla:await-serve`: the worker listens once `serve()` is called (at once if it was). */
  awaitsServe(worker: Worker): void {
    if (this.#serving) {
      this.#serveWorker(worker);
      return;
    }
    // it waits for the primary's service thread, not for its own start: no start-up timeout meanwhile
    const slot = this.#owners.get(worker);
    if (slot?.worker === worker) clearTimeout(slot.startupTimer);
    this.#awaiting.add(worker);
  }

  /** Replaces a healthy worker that outgrew its budget, gracefully (the same path as a rolling restart). */
  #recycle(worker: Worker, reason: RecycleReason, details: Record<string, number>): void {
    const slot = this.#owners.get(worker);
    if (slot === undefined) return;
    this.#o.logger.warn(
      { slot: slot.index, workerPid: worker.process.pid, reason, ...details },
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
    const upForMs = Date.now() - slot.upSince;
    this.#retiring.add(worker);
    this.#vacate(slot);
    const fields = { workerPid: worker.process.pid, silentMs };
    const message = 'worker stopped answering heartbeats (event loop stuck): starting a replacement, then killing it';
    const failure = {
      slot: slot.index,
      reason: 'heartbeat-timeout',
      upForMs,
      level: 'error',
      message,
      fields,
      now: true,
      ...this.#requestsOf(worker),
    } as const;
    if (this.#restarts.failed(failure) !== undefined) this.#fork(slot);
    worker.process.kill('SIGKILL');
  }

  #forkFailed(slot: Slot, worker: Worker | undefined, error: unknown): void {
    if (worker !== undefined) this.#owners.delete(worker);
    if (slot.worker === worker) this.#vacate(slot);
    if (slot.worker !== undefined || !this.#restarting) {
      this.#checkAllExited();
      return;
    }
    // while other workers serve, a fork failure (a full pids cgroup, say) is retried for as long as it lasts
    const upForMs = this.upWorkers.length > 0 ? Number.POSITIVE_INFINITY : 0;
    const fields = { err: error, code: (error as NodeJS.ErrnoException)?.code };
    const message = 'could not fork a worker: retrying';
    this.#restartLater(slot, this.#restarts.failed({ slot: slot.index, reason: 'fork-failed', upForMs, level: 'error', message, fields }));
  }

  #onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    this.#owners.delete(worker);
    this.#awaiting.delete(worker);
    this.#watch.unwatch(worker);
    this.#o.onExit(worker);
    const workerPid = worker.process.pid;
    // a retiring worker, or a replacement that exits before it took the slot: no failure of the slot
    if (this.#retiring.delete(worker) || slot.worker !== worker) {
      this.#o.logger.info({ slot: slot.index, workerPid, code, signal }, 'worker retired');
      this.#checkAllExited();
      return;
    }
    const wasUp = slot.up;
    const upForMs = wasUp ? Date.now() - slot.upSince : 0;
    this.#vacate(slot);
    this.#o.metrics.forgetWorker(slot.index);
    if (!this.#restarting) {
      if (code !== 0) this.uncleanExits++;
      this.#o.logger.info({ slot: slot.index, workerPid, code, signal }, 'worker exited');
      this.#checkAllExited();
      return;
    }
    const { reason, likelyCause } = exitReason({ failure: slot.failure, code, signal, wasUp });
    const fields = { workerPid, code, signal, likelyCause };
    const message = 'worker exited unexpectedly: replacing it';
    const failure = { slot: slot.index, reason, upForMs, level: 'warn', message, fields, ...this.#requestsOf(worker) } as const;
    this.#restartLater(slot, this.#restarts.failed(failure));
  }

  /** What a failure of `worker` is judged on besides its age: whether it received requests, and what it was serving. */
  #requestsOf(worker: Worker): { receivedRequests: boolean; routes: WorkerRoutes | undefined } {
    return { receivedRequests: this.#requests.received(worker), routes: this.#requests.routes(worker) };
  }

  /** The slot has no worker any more. */
  #vacate(slot: Slot): void {
    clearTimeout(slot.startupTimer);
    slot.worker = undefined;
    slot.up = false;
    this.#o.metrics.workersUp.set(this.upWorkers.length);
  }

  #restartLater(slot: Slot, delayMs: number | undefined): void {
    if (delayMs !== undefined) slot.restartTimer = setTimeout(() => this.#fork(slot), delayMs);
  }

  #checkAllExited(): void {
    if (!this.#restarting && this.#owners.size === 0) this.#allExited.resolve();
  }
}
