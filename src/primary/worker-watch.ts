import type { Worker } from 'node:cluster';
import { msg, type PongMessage } from '../ipc/protocol.ts';
import { isIdle } from '../process/vitals.ts';
import { Heartbeat, type HeartbeatPolicy } from './heartbeat.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';
import { type RecyclePolicy, type RecycleReason, Recycling } from './recycling.ts';

export interface WorkerWatchOptions {
  heartbeat: HeartbeatPolicy;
  recycle: RecyclePolicy;
  metrics: PrimaryMetrics;
  /** The slot of a worker that is its slot's current worker; undefined for one starting or retiring. */
  slotOf(worker: Worker): number | undefined;
  /** No answer for `heartbeat.timeoutMs`. */
  stuck(worker: Worker, silentMs: number): void;
  /** The worker outgrew its memory or request budget; `details` are for the log line. */
  outgrown(worker: Worker, reason: RecycleReason, details: Record<string, number>): void;
}

/**
 * What the primary learns of its listening workers through heartbeats: which
 * one stopped answering (`Heartbeat`), their vital signs (exported per slot)
 * and which one outgrew its budget (`Recycling`). It decides nothing about
 * replacing them: the supervisor does.
 *
 * @example
 * const watch = new WorkerWatch({ heartbeat, recycle, metrics, slotOf, stuck, outgrown });
 * watch.watch(worker); … watch.answered(worker, pong, true);
 */
export class WorkerWatch {
  readonly #o: WorkerWatchOptions;
  readonly #heartbeat: Heartbeat<Worker>;
  readonly #recycling: Recycling<Worker>;
  readonly #lastPong = new WeakMap<Worker, PongMessage>();

  constructor(options: WorkerWatchOptions) {
    this.#o = options;
    this.#recycling = new Recycling(options.recycle);
    this.#heartbeat = new Heartbeat(options.heartbeat, {
      ping: (worker, seq) => worker.send(msg.ping(seq)),
      stuck: (worker, silentMs) => options.stuck(worker, silentMs),
      age: (worker, silentMs) => {
        const slot = options.slotOf(worker);
        if (slot !== undefined) options.metrics.heartbeatAge(slot, silentMs);
      },
    });
  }

  start(): void {
    this.#heartbeat.start();
  }

  stop(): void {
    this.#heartbeat.stop();
  }

  /** From the moment it listens. */
  watch(worker: Worker): void {
    this.#heartbeat.watch(worker);
  }

  /** Once it exits or starts retiring. */
  unwatch(worker: Worker): void {
    this.#heartbeat.unwatch(worker);
  }

  /** A heartbeat's answer; `mayRecycle` is false while the cluster shuts down or the worker is not up. */
  answered(worker: Worker, pong: PongMessage, mayRecycle: boolean): void {
    this.#heartbeat.answered(worker, Date.now(), isIdle(this.#lastPong.get(worker), pong));
    this.#lastPong.set(worker, pong);
    const slot = this.#o.slotOf(worker);
    if (slot === undefined) return;
    this.#o.metrics.observeWorker(slot, {
      elu: pong.elu,
      delayP50Ms: pong.delayP50Ms,
      delayP99Ms: pong.delayP99Ms,
      delayMaxMs: pong.delayMaxMs,
      rssBytes: pong.rss,
    });
    const reason = mayRecycle ? this.#recycling.check(worker, pong) : undefined;
    if (reason === undefined) return;
    const requestLimit = this.#recycling.limitOf(worker);
    this.#o.outgrown(worker, reason, { rss: pong.rss, requests: pong.requests, maxMemoryMB: this.#o.recycle.maxMemoryMB, requestLimit });
  }
}
