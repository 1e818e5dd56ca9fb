import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { encodeWorkerStart, WORKER_ENV } from '../cluster/worker-env.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { serveMetrics } from '../metrics/endpoint.ts';
import { resolveWorkerCount } from './cpus.ts';
import { MetricsAggregator } from './metrics-aggregator.ts';
import { PrimaryMetrics } from './primary-metrics.ts';
import { rollingRestart } from './rolling-restart.ts';
import { type PrimaryHost, runPrimaryShutdown } from './shutdown.ts';
import { Supervisor } from './supervisor.ts';

export interface PrimaryOptions {
  config: ResolvedConfig;
  /** Absolute path of the service's setup module, loaded by every worker. */
  servicePath: string;
  /** The worker entry module. */
  workerEntry: string;
  logger: Logger;
  /**
   * Builds the service as set up in the primary (`role: 'primary'`): its schedulers run here, once.
   * Called once a worker listens: the workers' start-up comes first (on a machine with as many cores
   * as workers, loading the service here at the same time would slow it down).
   */
  loadHost?: () => Promise<PrimaryHost & { readonly registry: Registry }>;
}

const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
/** Time after the workers' own budget before the primary kills them. */
const KILL_MARGIN_MS = 250;

/**
 * The cluster's primary: forks and supervises the workers, runs the service's
 * schedulers once, serves the aggregated metrics, and turns the first
 * SIGINT/SIGTERM into one orderly shutdown of the whole tree.
 *
 * @example
 * const code = await new Primary({ config, servicePath, workerEntry, logger }).run();
 * process.exit(code);
 */
export class Primary {
  readonly #o: PrimaryOptions;
  readonly #metrics = new PrimaryMetrics();
  readonly #supervisor: Supervisor;
  readonly #aggregator: MetricsAggregator;
  readonly #done = Promise.withResolvers<number>();
  readonly #firstListening = Promise.withResolvers<void>();
  #metricsServer: Server | undefined;
  #host: (PrimaryHost & { readonly registry: Registry }) | undefined;
  #shutdown: Promise<void> | undefined;
  #rolling: Promise<boolean> | undefined;
  readonly #workers: number;

  constructor(options: PrimaryOptions) {
    this.#o = options;
    const { config, logger } = options;
    const count = resolveWorkerCount(config.workers);
    this.#workers = count;
    this.#supervisor = new Supervisor({
      count,
      exec: options.workerEntry,
      envFor: (slot) => ({ [WORKER_ENV]: encodeWorkerStart({ config, servicePath: options.servicePath, slot }) }),
      policy: {
        initialMs: config.cluster.backoffInitialMs,
        maxMs: config.cluster.backoffMaxMs,
        stableAfterMs: config.cluster.stableAfterMs,
        crashLoopFailures: config.cluster.crashLoopFailures,
        crashLoopWindowMs: config.cluster.crashLoopWindowMs,
      },
      startupTimeoutMs: config.cluster.startupTimeoutMs,
      shutdownBudgetMs: config.shutdown.timeoutMs,
      logger,
      metrics: this.#metrics,
      onCrashLoop: () => void this.shutdown('crash loop', 1),
      onFirstListening: (address) => {
        logger.info({ address, workers: count }, `${config.serviceName} cluster listening`);
        this.#firstListening.resolve();
      },
      onMessage: (_worker, message) => {
        if (message.type === 'flotilla:metrics-response') this.#aggregator.answer(message.id, message.metrics);
      },
    });
    const extra = () => (this.#host === undefined ? [] : [this.#host.registry]);
    this.#aggregator = new MetricsAggregator(() => this.#supervisor.upWorkers, this.#metrics, extra, config.cluster.scrapeTimeoutMs);
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

  /** While the workers start: the metrics endpoint; once one listens, the primary's part of the service. */
  async #startOwnParts(): Promise<void> {
    const { config, logger } = this.#o;
    try {
      const aggregator = this.#aggregator;
      const source = {
        collect: () => aggregator.scrape(),
        contentType: aggregator.contentType,
        onError: (err: unknown) => logger.error({ err }, 'metrics scrape failed'),
      };
      const endpoint = await serveMetrics(source, config.metrics);
      this.#metricsServer = endpoint.server;
      logger.info({ port: endpoint.port, path: config.metrics.path }, 'metrics endpoint listening');
      await this.#firstListening.promise;
      if (this.#shutdown !== undefined) return;
      const host = await this.#o.loadHost?.();
      if (host === undefined || this.#shutdown !== undefined) return;
      this.#host = host;
      await host.listen();
    } catch (error) {
      logger.fatal({ err: error }, 'the primary could not start its own parts (metrics endpoint, schedulers)');
      void this.shutdown('primary start failure', 1);
    }
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

  #trapSignals(): () => void {
    const handlers = (Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]).map((signal) => {
      const handler = () => {
        if (this.#shutdown !== undefined) {
          this.#o.logger.warn({ signal }, 'second signal: killing the workers and exiting now');
          this.#supervisor.kill('SIGKILL');
          process.exit(128 + SIGNALS[signal]);
        }
        void this.shutdown(signal);
      };
      process.on(signal, handler);
      return () => process.off(signal, handler);
    });
    const onHangup = () => {
      if (this.#shutdown !== undefined || this.#rolling !== undefined) return;
      this.#rolling = rollingRestart(this.#supervisor, this.#workers, this.#o.logger).finally(() => {
        this.#rolling = undefined;
      });
    };
    process.on('SIGHUP', onHangup);
    return () => {
      for (const off of handlers) off();
      process.off('SIGHUP', onHangup);
    };
  }
}
