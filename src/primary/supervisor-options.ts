import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { WorkerMessage } from '../ipc/protocol.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { HeartbeatPolicy } from './heartbeat.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';
import type { RecyclePolicy } from './recycling.ts';

/** What the `Supervisor` is given: its numbers (from the `cluster` config keys) and what it tells the primary. */
export interface SupervisorOptions {
  count: number;
  /** The worker entry module. */
  exec: string;
  /** Node flags of every worker (the primary's own, plus the heap share). */
  execArgv: readonly string[];
  /** Who hands connections to the workers: the primary (round robin) or the kernel. */
  balancing: 'primary' | 'kernel';
  /** The start-up data of the worker in a slot (`encodeWorkerStart`'s). */
  startFor(slot: number): string;
  /** A worker forked before the config was read (early-worker.ts), for the first slot's first start. */
  early?: Worker | undefined;
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
  /**
   * Every valid message from a worker: the primary's one dispatcher of them, which gives the
   * supervisor its part (`answered`, `listening`, `fatal`, …).
   */
  dispatch(message: WorkerMessage, worker: Worker): void;
  /** The first worker is listening. */
  onFirstListening(address: { host: string; port: number }): void;
  /** A worker process was forked (its metrics count as missing until its first snapshot). */
  onFork(worker: Worker): void;
  /** A worker process is gone, whatever the reason (its last metrics stay in the sums). */
  onExit(worker: Worker): void;
  /** A worker counts as up (it listens, or a replacement took its slot): it may be handed connections. */
  onUp?(worker: Worker): void;
  /** A worker is about to be retired gracefully: hand it no more connections. */
  onRetire?(worker: Worker): void;
}
