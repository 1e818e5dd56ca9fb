import type { Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { resolveWorkerCount } from '../cluster/cpus.ts';
import { encodeWorkerStart, WORKER_ENV } from '../cluster/worker-env.ts';
import type { ResolvedConfig } from '../config/types.ts';
import type { BootFailedMessage } from '../ipc/protocol.ts';
import { serveMetrics } from '../metrics/endpoint.ts';
import { SHUTDOWN_SIGNALS, trapShutdownSignals } from '../utils/shutdown-signals.ts';
import { cgroupMemoryLimit, workerHeapArgs } from './memory-limit.ts';
import { MetricsStore } from './metrics-store.ts';
import { PrimaryMetrics } from './primary-metrics.ts';
import { rollingRestart } from './rolling-restart.ts';
import { ServiceHost } from './service-host.ts';
import { runPrimaryShutdown } from './shutdown.ts';
import { Supervisor } from './supervisor.ts';
import { KILL_MARGIN_MS } from './worker-process.ts';

export interface PrimaryOptions {
  config: ResolvedConfig;
  /** Absolute path of the service's setup module, loaded by every worker and by the service thread. */
  servicePath: string;
  /** The worker entry module. */
  workerEntry: string;
  logger: Logger;
}

/** The service thread's heap limit without a container memory limit (with one: a worker's share). */
const SERVICE_THREAD_HEAP_MB = 1024;
/** A snapshot older than this many push intervals makes its process stale. */
const STALE_INTERVALS = 3;

/**
 * The cluster's primary: forks and supervises the workers, hosts the
 * service's schedulers once (in its service thread), serves the metrics of
 * the whole cluster from the snapshots its processes push, and turns the
 * first SIGINT/SIGTERM into one orderly shutdown of the whole tree. Its main
 * thread runs no service code.
 *
 * @example
 * const code = await new Primary({ config, servicePath, workerEntry, logger }).run();
 * process.exit(code);
 */
export class Primary {
  readonly #o: PrimaryOptions;
  readonly #metrics = new PrimaryMetrics();
  readonly #store = new MetricsStore();
  /** The primary's own metric names: a service metric named like one of them is left out of the sums. */
  readonly #reserved: ReadonlySet<string>;
  /** The store's text as last rendered; undefined once a snapshot or an exit changed it. */
  #storeText: string | undefined;
  #renderScheduled = false;
  readonly #supervisor: Supervisor;
  readonly #done = Promise.withResolvers<number>();
  readonly #firstListening = Promise.withResolvers<void>();
  #listened = false;
  #metricsServer: Server | undefined;
  #host: ServiceHost | undefined;
  #shutdown: Promise<void> | undefined;
  #rolling: Promise<boolean> | undefined;
  readonly #workers: number;
  /** The heap share of a worker in a memory-limited container (MiB); the service thread gets the same cap. */
  readonly #heapMB: number | undefined;

  constructor(options: PrimaryOptions) {
    this.#o = options;
    const { config, logger } = options;
    const count = resolveWorkerCount(config.workers);
    this.#workers = count;
    const heapArgs = workerHeapArgs({
      execArgv: process.execArgv,
      nodeOptions: process.env['NODE_OPTIONS'],
      limitBytes: cgroupMemoryLimit(),
      workers: count,
    });
    this.#heapMB = heapArgs.length > 0 ? Number(heapArgs[0]?.split('=')[1]) : undefined;
    if (heapArgs.length > 0) logger.info({ workers: count, heapMB: this.#heapMB }, 'container memory limit: heap share per worker');
    this.#reserved = new Set(this.#metrics.registry.getMetricsAsArray().map((m) => (m as { name: string }).name));
    const { cluster: c } = config;
    this.#supervisor = new Supervisor({
      count,
      exec: options.workerEntry,
      execArgv: [...process.execArgv, ...heapArgs],
      balancing: c.balancing,
      envFor: (slot) => ({ [WORKER_ENV]: encodeWorkerStart({ config, servicePath: options.servicePath, slot }) }),
      policy: this.#backoffPolicy(),
      heartbeat: { intervalMs: c.heartbeatIntervalMs, timeoutMs: c.heartbeatTimeoutMs },
      recycle: { maxMemoryMB: c.maxMemoryMB, maxRequests: c.maxRequests, maxRequestsJitter: c.maxRequestsJitter },
      startupTimeoutMs: c.startupTimeoutMs,
      shutdownBudgetMs: config.shutdown.timeoutMs,
      logger,
      metrics: this.#metrics,
      onCrashLoop: () => void this.shutdown('crash loop', 1),
      onFirstListening: (address) => {
        logger.info({ address, workers: count }, `${config.serviceName} cluster listening`);
        this.#listened = true;
        this.#firstListening.resolve();
      },
      onMessage: (worker, message) => {
        if (message.type === 'flotilla:metrics') this.#storeChanged(this.#store.update(keyOf(worker), message.metrics));
        else if (message.type === 'flotilla:boot-failed') this.#bootFailed(message);
      },
      onFork: (worker) => this.#store.join(keyOf(worker)),
      onExit: (worker) => {
        this.#store.retire(keyOf(worker));
        this.#storeChanged();
      },
    });
  }

  /** Starts everything; resolves with the process exit code once the cluster has shut down. */
  async run(): Promise<number> {
    const untrap = this.#trapSignals();
    this.#supervisor.start();
    void this.#startOwnParts();
    const code = await this.#done.promise;
    untrap();
    return code;
  }

  /** One scrape: the store's sums as they stand (no worker is asked, none is waited for), then the primary's own metrics. */
  async scrape(): Promise<string> {
    const staleAfterMs = STALE_INTERVALS * this.#o.config.cluster.metricsIntervalMs;
    this.#metrics.scrapeStale.set(this.#store.stale(Date.now(), staleAfterMs));
    this.#metrics.scrapeMissing.set(this.#store.missing);
    // prom-client's text of a registry: its families' blocks joined by blank lines, then a line feed
    const own = await this.#metrics.registry.metrics();
    const sums = this.#renderStore();
    return sums === '' ? own : `${sums}\n\n${own}`;
  }

  /**
   * The store changed (a snapshot arrived, a process exited): its text is rendered again right after
   * the messages at hand, off the scrape's path, so that a scrape only joins two texts.
   */
  #storeChanged(changed = true): void {
    if (!changed) return;
    this.#storeText = undefined;
    if (this.#renderScheduled) return;
    this.#renderScheduled = true;
    setImmediate(() => {
      this.#renderScheduled = false;
      this.#renderStore();
    });
  }

  #renderStore(): string {
    this.#storeText ??= this.#store.render(this.#reserved).join('\n\n');
    return this.#storeText;
  }

  /** While the workers start: the metrics endpoint; once one listens, the service thread. */
  async #startOwnParts(): Promise<void> {
    const { config, logger } = this.#o;
    try {
      const source = {
        collect: () => this.scrape(),
        contentType: Registry.PROMETHEUS_CONTENT_TYPE,
        onError: (err: unknown) => logger.error({ err }, 'metrics scrape failed'),
      };
      const endpoint = await serveMetrics(source, config.metrics);
      this.#metricsServer = endpoint.server;
      logger.info({ port: endpoint.port, path: config.metrics.path }, 'metrics endpoint listening');
      await this.#firstListening.promise;
      // the service thread starts once a worker listens: on a machine with as many cores as workers,
      // loading the service here at the same time would slow the workers' start-up down
      if (this.#shutdown !== undefined) return;
      this.#host = new ServiceHost({
        data: { config, servicePath: this.#o.servicePath },
        logger,
        policy: this.#backoffPolicy(),
        heartbeat: { intervalMs: config.cluster.heartbeatIntervalMs, timeoutMs: config.cluster.heartbeatTimeoutMs },
        resourceLimits: { maxOldGenerationSizeMb: this.#heapMB ?? SERVICE_THREAD_HEAP_MB },
        onMetrics: (thread, families) => {
          const key = `service:${thread}`;
          if (families !== undefined) this.#storeChanged(this.#store.update(key, families));
          else {
            this.#store.retire(key);
            this.#storeChanged();
          }
        },
        onCrashLoop: () => void this.shutdown('service thread crash loop', 1),
      });
      this.#host.start();
    } catch (error) {
      logger.fatal({ err: error }, 'the primary could not start its own parts (metrics endpoint, service thread)');
      void this.shutdown('primary start failure', 1);
    }
  }

  /**
   * A worker could not start for a reason a restart will not fix. Before any
   * worker ever listened (the service throws at import or in its setup), and
   * always for an address in use: one human line on stderr, and the cluster
   * exits 1. Later, a failing setup is a boot failure like any other.
   */
  #bootFailed(message: BootFailedMessage): void {
    if (this.#shutdown !== undefined || (this.#listened && message.kind === 'service')) return;
    process.stderr.write(`flotilla: ${message.kind === 'service' ? 'the service failed to start: ' : ''}${message.message}\n`);
    void this.shutdown(message.kind === 'service' ? 'service failed to start' : 'address in use', 1);
  }

  /** Shuts the cluster down (idempotent); `failureCode` forces a non-zero exit code (crash loop). */
  shutdown(reason: string, failureCode = 0): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#o.logger.info({ reason }, 'cluster shutting down');
      const ok = await runPrimaryShutdown({
        logger: this.#o.logger,
        supervisor: this.#supervisor,
        host: this.#host,
        budgetMs: this.#o.config.shutdown.timeoutMs,
        marginMs: KILL_MARGIN_MS,
      });
      this.#metricsServer?.close();
      this.#metricsServer?.closeAllConnections();
      this.#done.resolve(failureCode !== 0 ? failureCode : ok ? 0 : 1);
    })();
    return this.#shutdown;
  }

  #backoffPolicy() {
    const { cluster: c } = this.#o.config;
    return {
      initialMs: c.backoffInitialMs,
      maxMs: c.backoffMaxMs,
      stableAfterMs: c.stableAfterMs,
      crashLoopFailures: c.crashLoopFailures,
      crashLoopWindowMs: c.crashLoopWindowMs,
    };
  }

  #trapSignals(): () => void {
    const untrap = trapShutdownSignals({
      first: (signal) => void this.shutdown(signal),
      again: (signal) => {
        this.#o.logger.warn({ signal }, 'second signal: killing the workers and exiting now');
        this.#supervisor.kill('SIGKILL');
        process.exit(128 + SHUTDOWN_SIGNALS[signal]);
      },
    });
    const onHangup = () => {
      if (this.#shutdown !== undefined || this.#rolling !== undefined) return;
      this.#rolling = rollingRestart(this.#supervisor, this.#workers, this.#o.logger).finally(() => {
        this.#rolling = undefined;
      });
    };
    process.on('SIGHUP', onHangup);
    return () => {
      untrap();
      process.off('SIGHUP', onHangup);
    };
  }
}

/**
 * A worker's key in the metrics store: node:cluster's id, never reused while the primary lives (a pid
 * may be). The service thread's are `service:<n>`.
 */
function keyOf(worker: Worker): string {
  return String(worker.id);
}
