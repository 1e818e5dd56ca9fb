import type { Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { headerLines, securityHeaderList } from '../app/light-face.ts';
import { settingsFallbacksOf } from '../config/fallback-secrets.ts';
import type { ResolvedConfig } from '../config/types.ts';
import type { Coordinator } from '../coordination/coordinator.ts';
import { openCounterStore } from '../coordination/counter-stores.ts';
import { openSessionStore } from '../coordination/session-stores.ts';
import { openCoordinator } from '../coordination/start.ts';
import { dispatcher, ignore } from '../ipc/dispatch.ts';
import type { BootFailedMessage, WorkerMessage } from '../ipc/protocol.ts';
import { serveMetrics } from '../metrics/endpoint.ts';
import { Registry } from '../metrics/prom-client.ts';
import { encodeWorkerStart } from '../process/worker-env.ts';
import { SHUTDOWN_SIGNALS, trapShutdownSignals } from '../utils/shutdown-signals.ts';
import { Autoscaler } from './autoscaler.ts';
import { backoffPolicyOf } from './backoff.ts';
import { ClusterExposition, staleAfterMs } from './cluster-exposition.ts';
import { ClusterSessions } from './cluster-sessions.ts';
import { Distributor } from './distributor.ts';
import { takeEarlyWorker } from './early-worker.ts';
import { heapArgsFor } from './memory-limit.ts';
import { PrimaryMetrics } from './primary-metrics.ts';
import { ClusterCounts } from './rate-limit-counter.ts';
import { type ReloadOutcome, type ReloadTarget, reloadCluster } from './reload.ts';
import { ServiceHost } from './service-host.ts';
import { checkSettingsInThread, SETTINGS_CHECK_DELAY_MS, type SettingsCheck } from './settings-check.ts';
import { runPrimaryShutdown } from './shutdown.ts';
import { Supervisor } from './supervisor.ts';
import { TlsRotation } from './tls-rotation.ts';
import { TopicRelay } from './topic-relay.ts';
import { KILL_MARGIN_MS } from './worker-process.ts';
import { workerRange } from './worker-range.ts';

export interface PrimaryOptions {
  config: ResolvedConfig;
  /** The config file as the command line named it: read again on SIGHUP, and where `settings` problems are located. */
  configFile?: string;
  /** Reads and validates the config file again (SIGHUP); throws `ConfigError`. Without it, SIGHUP restarts onto the same config. */
  load?: () => ResolvedConfig;
  /** Absolute path of the service's setup module, loaded by every worker and by the service thread. */
  servicePath: string;
  /** The worker entry module. */
  workerEntry: string;
  logger: Logger;
  /** Called once the first worker listens and the metrics endpoint has settled (`flotilla dev` prints its banner). */
  onListening?(address: { host: string; port: number }): void;
}

/** The service thread's heap limit without a container memory limit (with one: a worker's share). */
const SERVICE_THREAD_HEAP_MB = 1024;

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
  readonly #exposition = new ClusterExposition(this.#metrics);
  readonly #supervisor: Supervisor;
  /** With `workers: { min, max }`, the count follows the load; with a fixed one it does nothing. */
  readonly #autoscaler: Autoscaler;
  /** The connection hand-off, with `cluster.balancing: primary`. */
  readonly #distributor: Distributor | undefined;
  readonly #done = Promise.withResolvers<number>();
  #listened = false;
  /**
   * The service thread is wanted: a worker listens, or one awaits the service's `beforeServe` hooks
   * (`flotilla:await-serve`). Until then it does not start: on a machine with as many cores as workers,
   * loading the service here at the same time would slow the workers' start-up down.
   */
  readonly #serviceWanted = Promise.withResolvers<void>();
  /** Settles once the metrics endpoint listens, or will not (invalid settings, a failed start, a shutdown first). */
  readonly #metricsSettled = Promise.withResolvers<void>();
  #metricsServer: Server | undefined;
  #host: ServiceHost | undefined;
  #shutdown: Promise<void> | undefined;
  /** The config new workers and the service thread start with: the file's latest valid one after a reload. */
  #config: ResolvedConfig;
  #reloading: Promise<ReloadOutcome> | undefined;
  /** A reload was asked for while one ran: another runs after it (`code` if any asked for a code reload). */
  #reloadAgain: { code: boolean } | undefined;
  /** Service threads started so far (a reload starts a new one): their metric keys stay apart. */
  #hosts = 0;
  /** The heap share of a worker in a memory-limited container (MiB); the service thread gets the same cap. */
  readonly #heapMB: number | undefined;
  /** The port the workers listen on: the config's, or the primary's own listener's for `port: 0` with `balancing: primary`. */
  #port: number;
  /** The rate-limit counts of every worker (their store opened on the first hit). */
  readonly #counts = new ClusterCounts(() => openCounterStore(this.#config, this.#o.logger.child({ component: 'rate-limit' })));
  /** The sessions of every worker (their store opened on the first use). */
  readonly #sessions = new ClusterSessions(() => openSessionStore(this.#config, this.#o.logger.child({ component: 'sessions' })));
  /** `app.publish` of the workers and the service thread, to every worker (and replica). */
  readonly #topics: TopicRelay;
  /** The coordinator publishes cross replicas through (`coordination.url`). */
  #replicas: Coordinator | undefined;
  /** The TLS certificate pair, read and watched here for every worker (`tls`). */
  readonly #tls: TlsRotation | undefined;
  /** The check of the service's `settings` that runs at the start, before the primary opens a port (settings-check.ts). */
  #settingsCheck: SettingsCheck | undefined;

  constructor(options: PrimaryOptions) {
    this.#o = options;
    const { config, logger } = options;
    this.#config = config;
    this.#port = config.port;
    const range = workerRange(config.workers);
    // the tree starts with `min`; the heap is shared as if it had grown to `max`, so that it never outgrows the limit
    const count = range.min;
    const heapArgs = heapArgsFor(range.max);
    this.#heapMB = heapArgs.length > 0 ? Number(heapArgs[0]?.split('=')[1]) : undefined;
    if (heapArgs.length > 0) logger.info({ workers: range.max, heapMB: this.#heapMB }, 'container memory limit: heap share per worker');
    const { cluster: c, overload } = config;
    if (c.balancing === 'primary') {
      const m = this.#metrics;
      this.#distributor = new Distributor({
        shed: overload.enabled,
        targetMs: overload.queueTargetMs,
        intervalMs: overload.queueIntervalMs,
        retryAfterS: overload.retryAfterS,
        headers: headerLines(securityHeaderList(config.securityHeaders)),
        priorityPaths: config.disableHealth ? [] : ['/health'],
        logger,
        metrics: {
          shed: (reason) => m.shed.inc({ reason }),
          waited: (seconds) => m.handoffWait.observe(seconds),
          queued: (length) => m.handoffQueue.set(length),
        },
      });
    }
    this.#supervisor = new Supervisor({
      count,
      exec: options.workerEntry,
      execArgv: [...process.execArgv, ...heapArgs],
      balancing: c.balancing,
      startFor: (slot) => this.#workerStart(slot),
      // the first worker, forked before the config was read, if it started with this heap share
      early: takeEarlyWorker(heapArgs),
      policy: backoffPolicyOf(c),
      heartbeat: { intervalMs: c.heartbeatIntervalMs, timeoutMs: c.heartbeatTimeoutMs },
      recycle: { maxMemoryMB: c.maxMemoryMB, maxRequests: c.maxRequests, maxRequestsJitter: c.maxRequestsJitter },
      startupTimeoutMs: c.startupTimeoutMs,
      shutdownBudgetMs: config.shutdown.timeoutMs,
      logger,
      metrics: this.#metrics,
      onCrashLoop: () => void this.shutdown('crash loop', 1),
      onFirstListening: (address) => {
        logger.info({ address, workers: count }, `${config.serviceName} cluster listening`);
        // the banner names the metrics port: it waits for the endpoint, which starts once a worker ran the setup
        if (options.onListening !== undefined) void this.#metricsSettled.promise.then(() => options.onListening?.(address));
        this.#listened = true;
        this.#serviceWanted.resolve();
      },
      // every message a worker sends the primary is handled here, the supervisor's part first
      dispatch: dispatcher<WorkerMessage, Worker>({
        'flotilla:pong': (message, worker) => {
          this.#supervisor.answered(worker, message);
          this.#autoscaler.answered(worker, message);
          this.#exposition.touch(keyOf(worker));
        },
        'flotilla:listening': (message, worker) => this.#supervisor.listening(worker, message.address),
        'flotilla:first-request': (message, worker) => this.#supervisor.firstRequest(worker, message),
        'flotilla:shutdown-complete': (_, worker) => this.#supervisor.shutdownComplete(worker),
        'flotilla:fatal': (message, worker) => this.#supervisor.fatal(worker, message),
        'flotilla:boot-failed': (message, worker) => {
          this.#supervisor.bootFailed(worker);
          this.#bootFailed(message);
        },
        'flotilla:await-serve': (_, worker) => {
          this.#supervisor.awaitsServe(worker);
          this.#serviceWanted.resolve();
        },
        'flotilla:metrics': (message, worker) => this.#exposition.update(keyOf(worker), message.metrics),
        'flotilla:rate-limit-hits': (message, worker) => this.#counts.hits(worker, message),
        'flotilla:session': (message, worker) => this.#sessions.handle(worker, message),
        'flotilla:handoff-ack': (message, worker) => this.#distributor?.acked(worker, message.accepted),
        'flotilla:publish': (message) => this.#topics.published(message),
        // the service thread's own (src/primary/service-host.ts)
        'flotilla:service-idle': ignore,
        'flotilla:service-ready': ignore,
      }),
      onFork: (worker) => {
        this.#tls?.forked(worker);
        this.#exposition.join(keyOf(worker));
        this.#distributor?.starting(worker);
      },
      onExit: (worker) => {
        this.#distributor?.remove(worker);
        this.#exposition.retire(keyOf(worker));
      },
      onUp: (worker) => this.#distributor?.add(worker),
      onRetire: (worker) => this.#distributor?.retire(worker),
    });
    this.#autoscaler = new Autoscaler({
      range,
      scaleDownAfterMs: c.scaleDownAfterMs,
      heartbeatIntervalMs: c.heartbeatIntervalMs,
      logger,
      upWorkers: () => this.#supervisor.upWorkers,
      count: () => this.#supervisor.count,
      resize: (n) => this.#supervisor.resize(n),
    });
    this.#topics = new TopicRelay(() => this.#supervisor.liveWorkers, logger, replicaName());
    this.#tls =
      config.tls === undefined
        ? undefined
        : new TlsRotation(config.tls, logger, this.#metrics.registry, () => this.#supervisor.liveWorkers);
  }

  /** The port of the cluster's metrics endpoint once it listens. */
  get metricsPort(): number | undefined {
    const address = this.#metricsServer?.address();
    return typeof address === 'object' && address !== null ? address.port : undefined;
  }

  /** Starts everything; resolves with the process exit code once the cluster has shut down. */
  async run(): Promise<number> {
    const { config, servicePath, configFile } = this.#o;
    const settingsFallbacks = settingsFallbacksOf(config);
    const data = { config, servicePath, settingsFallbacks, ...(configFile === undefined ? {} : { configFile }) };
    // with balancing: kernel the workers' setup checks the settings first, unless it is slow (see settings-check.ts)
    const settings = checkSettingsInThread(data, this.#distributor === undefined ? SETTINGS_CHECK_DELAY_MS : 0);
    this.#settingsCheck = settings;
    if (this.#distributor !== undefined) {
      // the primary binds the service port itself: the settings first (otherwise the workers start meanwhile,
      // and the metrics endpoint waits for the verdict, see #startOwnParts)
      const verdict = await settings.verdict;
      if (verdict.valid === false) {
        process.stderr.write(`flotilla: ${verdict.message}\n`);
        return 2;
      }
    }
    // before the signals are trapped: nothing runs yet that a signal's default action would cut short
    const port = await this.#bind();
    if (port === undefined) {
      // what a worker would report (`address-in-use`), had it not bound beside the holder with SO_REUSEPORT
      process.stderr.write(`flotilla: port ${this.#config.port} on ${this.#config.host} is already in use\n`);
      return 1;
    }
    this.#port = port;
    const untrap = this.#trapSignals();
    this.#tls?.start();
    this.#supervisor.start();
    void this.#startOwnParts(settings);
    const code = await this.#done.promise;
    untrap();
    return code;
  }

  /**
   * The port the workers serve: the primary's own listener with `balancing: primary`; otherwise the
   * config's (node:cluster shares one socket among the workers, port 0 included, and reports a port in
   * use itself). Undefined when the address is in use.
   */
  async #bind(): Promise<number | undefined> {
    const { host, port } = this.#config;
    if (this.#distributor === undefined) return port;
    try {
      return (await this.#distributor.listen(host, port)).port;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
      throw error;
    }
  }

  /** One scrape: the processes' sums as they stand, then the primary's own metrics (see `ClusterExposition`). */
  scrape(): Promise<string> {
    const c = this.#config.cluster;
    return this.#exposition.scrape(
      staleAfterMs(c.metricsIntervalMs, { intervalMs: c.heartbeatIntervalMs, timeoutMs: c.heartbeatTimeoutMs }),
    );
  }

  /**
   * Once the settings are known valid (the check's verdict, or a worker that ran the setup), the metrics
   * endpoint; then, once a worker listens or awaits the service's `beforeServe` hooks, the service
   * thread: the workers that await the hooks listen once it is ready (migrations are done before any
   * worker serves). Invalid settings stop the start, the problems on stderr, exit 2, with no port open.
   */
  async #startOwnParts(settings: SettingsCheck): Promise<void> {
    const { config, logger } = this.#o;
    try {
      const ranSetup = this.#serviceWanted.promise.then(() => ({ valid: true }) as const);
      const verdict = await Promise.race([settings.verdict, ranSetup]);
      settings.stop();
      if (verdict.valid === false && this.#shutdown === undefined) {
        process.stderr.write(`flotilla: ${verdict.message}\n`);
        void this.shutdown('invalid settings', 2);
      }
      if (this.#shutdown !== undefined) return;
      this.#metrics.collectProcessMetrics();
      const source = {
        collect: () => this.scrape(),
        contentType: Registry.PROMETHEUS_CONTENT_TYPE,
        onError: (err: unknown) => logger.error({ err }, 'metrics scrape failed'),
      };
      const endpoint = await serveMetrics(source, config.metrics);
      this.#metricsServer = endpoint.server;
      logger.info({ port: endpoint.port, path: config.metrics.path }, 'metrics endpoint listening');
      this.#metricsSettled.resolve();
      if (config.coordination.url !== undefined && this.#shutdown === undefined)
        this.#connectReplicas().catch((err: unknown) => logger.error({ err }, 'publishes will not reach the other replicas'));
      await this.#serviceWanted.promise;
      if (this.#shutdown === undefined) this.#startServiceThread();
    } catch (error) {
      logger.fatal({ err: error }, 'the primary could not start its own parts (metrics endpoint, service thread)');
      void this.shutdown('primary start failure', 1);
    } finally {
      this.#metricsSettled.resolve();
    }
  }

  /**
   * With `coordination.url`: publishes go to the other replicas, theirs come here (a coordinator of the
   * main thread's own: the service thread's lives and dies with its schedulers). Closed at the shutdown.
   */
  async #connectReplicas(): Promise<void> {
    const { config, logger } = this.#o;
    const child = logger.child({ component: 'topics' });
    const { coordinator } = await openCoordinator(config, child, () => {});
    this.#replicas = coordinator;
    await coordinator.listen((message) => this.#topics.received(message));
    this.#topics.connect(coordinator);
    child.info('publishes reach the other replicas through the coordinator');
  }

  /** The primary's part of the service, in a thread of its own, on the current config. */
  #startServiceThread(): void {
    const config = this.#config;
    const host = this.#hosts++;
    this.#host = new ServiceHost({
      data: {
        config,
        servicePath: this.#o.servicePath,
        settingsFallbacks: settingsFallbacksOf(config),
        ...(this.#o.configFile === undefined ? {} : { configFile: this.#o.configFile }),
      },
      logger: this.#o.logger,
      policy: backoffPolicyOf(config.cluster),
      heartbeat: { intervalMs: config.cluster.heartbeatIntervalMs, timeoutMs: config.cluster.heartbeatTimeoutMs },
      resourceLimits: { maxOldGenerationSizeMb: this.#heapMB ?? SERVICE_THREAD_HEAP_MB },
      onMetrics: (thread, families) => {
        const key = `service:${host}.${thread}`;
        if (families !== undefined) this.#exposition.update(key, families);
        else this.#exposition.retire(key);
      },
      onAlive: (thread) => this.#exposition.touch(`service:${host}.${thread}`),
      // the service's `beforeServe` hooks ran: the workers that await them listen
      onReady: () => this.#supervisor.serve(),
      onBootFailed: (message) => this.#bootFailed(message),
      onCrashLoop: () => void this.shutdown('service thread crash loop', 1),
      onPublish: (message) => this.#topics.published(message),
    });
    this.#host.start();
  }

  #workerStart(slot: number): string {
    const { servicePath, configFile } = this.#o;
    // a reload keeps `port` (a fixed key): the port picked for `port: 0` stays the workers'
    const config = this.#port === this.#config.port ? this.#config : { ...this.#config, port: this.#port };
    // the settings on development fallbacks travel beside the config: its setup refuses the secret ones
    const settingsFallbacks = settingsFallbacksOf(this.#config);
    return encodeWorkerStart({ config, servicePath, slot, settingsFallbacks, ...(configFile === undefined ? {} : { configFile }) });
  }

  /**
   * A worker (or the service thread) could not start for a reason a restart will not fix. Before any
   * worker ever listened (the service throws at import or in its setup, or
   * refuses its `settings`), and always for an address in use: the reason on
   * stderr, and the cluster exits (2 for the config, 1 otherwise). Later (a
   * reload, a replacement), the old workers keep serving: it is logged.
   */
  #bootFailed(message: BootFailedMessage): void {
    if (this.#shutdown !== undefined) return;
    const text = `${message.kind === 'service' ? 'the service failed to start: ' : ''}${message.message}`;
    if (this.#listened && message.kind !== 'address-in-use') {
      this.#o.logger.error({ kind: message.kind, workerPid: message.pid }, `a new worker could not start: ${text}`);
      return;
    }
    process.stderr.write(`flotilla: ${text}\n`);
    const reasons = { service: 'service failed to start', config: 'invalid settings', 'address-in-use': 'address in use' };
    void this.shutdown(reasons[message.kind], message.kind === 'config' ? 2 : 1);
  }

  /**
   * Reads the config file again and moves the cluster onto it (see `reloadCluster`):
   * what SIGHUP does, and `flotilla dev` on a change (`code: true`: restart the
   * workers even when the config is the same). A reload asked for while one
   * runs follows it.
   */
  reload({ code = false }: { code?: boolean } = {}): Promise<ReloadOutcome> {
    if (this.#shutdown !== undefined) return Promise.resolve('refused');
    if (this.#reloading !== undefined) {
      this.#reloadAgain = { code: code || this.#reloadAgain?.code === true };
      return this.#reloading;
    }
    const target: ReloadTarget = {
      config: this.#config,
      logger: this.#o.logger,
      supervisor: this.#supervisor,
      load: this.#o.load ?? (() => this.#config),
      adopt: (config) => {
        this.#config = config;
        this.#o.logger.level = config.logging.level;
        this.#autoscaler.follow(workerRange(config.workers), config.cluster.scaleDownAfterMs);
        this.#tls?.follow(config);
      },
      restartServiceThread: async () => {
        await this.#host?.close(Date.now() + this.#config.shutdown.timeoutMs);
        if (this.#shutdown === undefined && this.#host !== undefined) this.#startServiceThread();
      },
    };
    this.#reloading = reloadCluster(target, { code })
      .catch((error: unknown) => {
        this.#o.logger.error({ err: error }, 'reload failed unexpectedly: the cluster keeps serving');
        return 'failed' as const;
      })
      .finally(() => {
        this.#reloading = undefined;
        const again = this.#reloadAgain;
        this.#reloadAgain = undefined;
        if (again !== undefined) void this.reload(again);
      });
    return this.#reloading;
  }

  /** Shuts the cluster down (idempotent); `failureCode` forces a non-zero exit code (crash loop). */
  shutdown(reason: string, failureCode = 0): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#o.logger.info({ reason }, 'cluster shutting down');
      this.#autoscaler.stop();
      this.#settingsCheck?.stop();
      const ok = await runPrimaryShutdown({
        logger: this.#o.logger,
        supervisor: this.#supervisor,
        host: this.#host,
        connections: this.#distributor,
        drainDelayMs: this.#config.shutdown.drainDelayMs,
        budgetMs: this.#config.shutdown.timeoutMs,
        marginMs: KILL_MARGIN_MS,
      });
      this.#metricsServer?.close();
      this.#metricsServer?.closeAllConnections();
      this.#tls?.close();
      await this.#counts.close().catch((error: unknown) => this.#o.logger.warn({ err: error }, 'closing the rate-limit store failed'));
      await this.#sessions.close().catch((error: unknown) => this.#o.logger.warn({ err: error }, 'closing the session store failed'));
      await this.#replicas?.close().catch(() => {});
      this.#done.resolve(failureCode !== 0 ? failureCode : ok ? 0 : 1);
    })();
    return this.#shutdown;
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
      this.#o.logger.info('SIGHUP: reloading the config and restarting the workers onto it');
      // the certificate first: the workers serving now take a rotated pair without waiting for their replacement
      this.#tls?.reload();
      void this.reload();
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

/** This replica's name among the others (host, pid and a random part), as the coordinator's holders are named. */
function replicaName(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}
