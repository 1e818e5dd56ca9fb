import { type ResourceLimits, Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { entryPoint } from '../entry-points.ts';
import { dispatcher, ignore } from '../ipc/dispatch.ts';
import {
  type BootFailedMessage,
  isWorkerMessage,
  type MetricFamily,
  msg,
  type PongMessage,
  type PublishMessage,
  type WorkerMessage,
} from '../ipc/protocol.ts';
import { isIdle } from '../process/vitals.ts';
import { Backoff, type BackoffPolicy } from './backoff.ts';
import { Heartbeat, type HeartbeatPolicy } from './heartbeat.ts';

/** Time after the deadline before a thread still running its shutdown is terminated. */
const TERMINATE_MARGIN_MS = 200;

export interface ServiceHostOptions {
  /** Handed to the thread (`service-thread.ts`) as `workerData`. */
  data: unknown;
  logger: Logger;
  policy: BackoffPolicy;
  heartbeat: HeartbeatPolicy;
  resourceLimits: ResourceLimits;
  /**
   * The latest metric snapshot of the `thread`-th thread started (0, 1, …); `undefined` once that thread
   * is gone (its counters stay in the sums).
   */
  onMetrics(thread: number, families: readonly MetricFamily[] | undefined): void;
  /** The `thread`-th thread answered a heartbeat: its last snapshot is current (it pushes one only on a change). */
  onAlive?(thread: number): void;
  /** The thread's setup ran and its `beforeServe` hooks are done (`flotilla:service-ready`); again for each thread started. */
  onReady?(thread: number): void;
  /** The thread could not start for a reason a restart will not fix (it is not restarted). */
  onBootFailed?(message: BootFailedMessage): void;
  /** The thread keeps failing early: the primary gives up. */
  onCrashLoop(): void;
  /** The service's primary part published (`app.publish` in a cron job, say). */
  onPublish?(message: PublishMessage): void;
}

/**
 * Supervises the primary's service thread (its entry is
 * `service-thread.ts`): the service's schedulers and primary-side
 * shutdown hooks, off the primary's main thread. A thread that crashes, runs
 * out of memory (`resourceLimits`) or stops answering heartbeats is replaced
 * with the workers' backoff; `close(deadline)` relays the shutdown and
 * resolves once the thread's hooks ran or the deadline passed (the thread is
 * then terminated).
 *
 * @example
 * const host = new ServiceHost({ data, logger, policy, heartbeat, resourceLimits, onMetrics, onCrashLoop });
 * host.start(); … await host.close(Date.now() + 10_000);
 */
export class ServiceHost {
  readonly #o: ServiceHostOptions;
  readonly #backoff: Backoff;
  readonly #heartbeat: Heartbeat<Worker>;
  #thread: Worker | undefined;
  /** Threads started so far. */
  #started = 0;
  #startedAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  #clean = true;
  /** The service has nothing to run in the primary: its thread ended on purpose (`flotilla:service-idle`). */
  #idle = false;
  /** The thread reported a failure a restart will not fix: it is not restarted. */
  #bootFailed = false;

  constructor(options: ServiceHostOptions) {
    this.#o = options;
    this.#backoff = new Backoff(options.policy);
    this.#heartbeat = new Heartbeat(options.heartbeat, {
      ping: (thread, seq) => thread.postMessage(msg.ping(seq)),
      stuck: (thread, silentMs) => {
        options.logger.error({ silentMs, reason: 'heartbeat-timeout' }, 'service thread stopped answering heartbeats: replacing it');
        void thread.terminate();
      },
      age: () => {},
    });
  }

  /** Whether the last shutdown ran the thread's hooks in time, without a failure. */
  get cleanShutdown(): boolean {
    return this.#clean;
  }

  start(): void {
    this.#heartbeat.start();
    this.#spawn();
  }

  /** Relays the shutdown; resolves once the thread's hooks ran, or just after the deadline (the thread is then terminated). */
  close(deadline: number): Promise<void> {
    this.#closing ??= this.#close(deadline);
    return this.#closing;
  }

  async #close(deadline: number): Promise<void> {
    clearTimeout(this.#restartTimer);
    this.#heartbeat.stop();
    const thread = this.#thread;
    if (thread === undefined) return;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    thread.postMessage(msg.shutdown(deadline));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      // the thread's own sequence ends its hooks at the deadline and reports: a moment for that, then terminate
      timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()) + TERMINATE_MARGIN_MS);
    });
    const outcome = await Promise.race([exited, late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.#clean = false;
      this.#o.logger.error('service thread: shutdown hooks still running at the deadline: terminating it');
      await thread.terminate();
    }
  }

  #spawn(): void {
    const { logger } = this.#o;
    const thread = new Worker(entryPoint('primary/service-thread'), { workerData: this.#o.data, resourceLimits: this.#o.resourceLimits });
    this.#thread = thread;
    this.#startedAt = 0;
    const generation = this.#started++;
    let failure: unknown;
    let lastPong: PongMessage | undefined;
    // the thread speaks the workers' protocol; what only a worker process sends never comes from it
    const fromThread = dispatcher<WorkerMessage>({
      'flotilla:pong': (message) => {
        this.#heartbeat.answered(thread, Date.now(), isIdle(lastPong, message));
        lastPong = message;
        this.#o.onAlive?.(generation);
      },
      'flotilla:metrics': (message) => {
        if (this.#startedAt === 0) {
          this.#startedAt = Date.now();
          this.#heartbeat.watch(thread);
        }
        this.#o.onMetrics(generation, message.metrics);
      },
      'flotilla:shutdown-complete': (message) => {
        this.#clean &&= message.ok;
      },
      'flotilla:service-ready': () => this.#o.onReady?.(generation),
      'flotilla:publish': (message) => this.#o.onPublish?.(message),
      'flotilla:boot-failed': (message) => {
        this.#bootFailed = true;
        this.#o.onBootFailed?.(message);
      },
      'flotilla:service-idle': () => {
        this.#idle = true;
        this.#heartbeat.unwatch(thread);
        logger.info('the service registers no scheduler and no shutdown hook for the primary: its thread ends');
      },
      'flotilla:listening': ignore,
      'flotilla:fatal': ignore,
      'flotilla:handoff-ack': ignore,
      'flotilla:await-serve': ignore,
      'flotilla:first-request': ignore,
      'flotilla:rate-limit-hits': ignore,
      'flotilla:session': ignore,
    });
    thread.on('message', (message: unknown) => {
      if (isWorkerMessage(message)) fromThread(message, undefined);
    });
    thread.on('error', (error) => {
      failure = error;
    });
    thread.on('exit', (code) => {
      this.#heartbeat.unwatch(thread);
      this.#thread = undefined;
      this.#o.onMetrics(generation, undefined);
      if (this.#closing !== undefined || this.#idle || this.#bootFailed) return;
      const upForMs = this.#startedAt === 0 ? 0 : Date.now() - this.#startedAt;
      const { delayMs, crashLoop } = this.#backoff.fail(Date.now(), upForMs);
      if (crashLoop) {
        logger.fatal({ err: failure, code }, 'the service thread keeps failing early: giving up (crash loop)');
        this.#o.onCrashLoop();
        return;
      }
      logger.error({ err: failure, code, delayMs }, 'the service thread exited unexpectedly: restarting it');
      this.#restartTimer = setTimeout(() => this.#spawn(), delayMs);
    });
  }
}
