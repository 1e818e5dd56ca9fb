import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { App, awaitsStartHooks, headerLines, securityHeaderList } from '../app/index.ts';
import { ConfigError } from '../config/config-error.ts';
import { markSettingsFallbacks } from '../config/fallback-secrets.ts';
import { locateProblems } from '../config/load-file.ts';
import { adoptResolvedConfig } from '../config/validate.ts';
import { dispatcher, ignore } from '../ipc/dispatch.ts';
import {
  type BootFailedMessage,
  describeInvalid,
  isFlotillaMessage,
  isPrimaryMessage,
  msg,
  type PrimaryMessage,
  type WorkerMessage,
} from '../ipc/protocol.ts';
import { toMetricFamilies } from '../metrics/metric-families.ts';
import { describeServiceError } from '../process/boot-failure.ts';
import { loadService } from '../process/load-service.ts';
import { Vitals } from '../process/vitals.ts';
import { decodeWorkerStart, WORKER_ENV } from '../process/worker-env.ts';
import { onFirstRequest } from './first-request.ts';
import { dropHandle, HandedConnections } from './handed-connections.ts';
import { IpcTopics } from './ipc-topics.ts';
import { PrimaryCounterStore } from './rate-limit-client.ts';
import { PrimarySessionStore } from './session-client.ts';
import { beatInterval, startWatchdog } from './watchdog.ts';

/**
 * A cluster worker: builds the App from the config the primary validated,
 * runs the service's setup, listens, and from then on obeys the primary's
 * messages: it answers heartbeats with its vital signs and the routes it is
 * serving, tells it when the first request arrives, pushes a metrics
 * snapshot every `cluster.metricsIntervalMs` (and a final one before it
 * exits), and shuts down when told. Signals aimed at the whole process group
 * (a terminal's Ctrl-C) are ignored: shutdown comes from the primary only, so
 * hooks never run twice. A watchdog thread ends the worker if the primary is
 * gone while the main thread is stuck.
 */
const start = decodeWorkerStart(process.env[WORKER_ENV]);
// the config holds the service's settings and the coordinator's URL: not for the child processes a service spawns
delete process.env[WORKER_ENV];
// the primary validated this config before forking: adopting it spares the worker compiling the schema again
const config = adoptResolvedConfig(start.config);
// in production, the settings on development fallbacks: the service's setup refuses the secret ones
markSettingsFallbacks(config, start.settingsFallbacks ?? []);
// balancing: primary: the primary accepts the connections and hands them over (src/primary/distributor.ts)
const handed =
  config.cluster.balancing === 'primary'
    ? new HandedConnections(
        { host: config.host, port: config.port },
        config.overload.retryAfterS,
        headerLines(securityHeaderList(config.securityHeaders)),
      )
    : undefined;
/** How much longer than `coordination.timeoutMs` a worker waits for the primary's answer (a rate limit's count, a session). */
const RATE_LIMIT_MARGIN_MS = 500;
// rate limits are counted by the primary, for every worker; it answers within the coordinator's timeout
// (with coordination.url it asks the coordinator), and the margin covers the hop
const counterStore = new PrimaryCounterStore((message) => {
  if (!process.connected || process.send === undefined) return false;
  process.send(message);
  return true;
}, config.coordination.timeoutMs + RATE_LIMIT_MARGIN_MS);
// sessions are kept by the primary, for every worker (with sessions.store: coordination it asks the coordinator)
const sessionStore = new PrimarySessionStore((message) => {
  if (!process.connected || process.send === undefined) return false;
  process.send(message);
  return true;
}, config.coordination.timeoutMs + RATE_LIMIT_MARGIN_MS);
// app.publish goes through the primary, which hands each message to every worker (src/primary/topic-relay.ts)
const topics = new IpcTopics((message) => {
  if (process.connected) process.send?.(message);
});
/**
 * The service's module, loaded before the App: its `defineService({ logger })` makes the App's logger,
 * called here once. What fails here (the import, the factory) fails the boot, reported by `boot()`.
 */
const service = await (async () => {
  try {
    const setup = await loadService<App>(start.servicePath);
    return { setup, logger: setup.logger?.() as Logger | undefined, failure: undefined };
  } catch (failure) {
    return { setup: undefined, logger: undefined, failure };
  }
})();
// the primary relays signals, runs the schedulers once and serves the cluster's metrics; the worker's
// registry carries its process metrics for the primary to sum
const newApp = (logger: Logger | undefined) =>
  new App(config, {
    ...(logger === undefined ? {} : { logger }),
    counterStore,
    sessionStore,
    role: 'worker',
    logBindings: { worker: start.slot },
    handleSignals: false,
    runSchedulers: false,
    serveMetrics: false,
    processMetrics: true,
    ...(handed === undefined ? {} : { connections: handed }),
    topics,
    // the primary watches the certificate files and hands every worker the pair (flotilla:certificates)
    watchCertificates: false,
  });
let bootFailure = service.failure;
let app: App;
try {
  app = newApp(service.logger);
} catch (error) {
  // a `logger` that is not a pino logger (FLO_ERR_BAD_LOGGER): flotilla's own says so
  if (service.logger === undefined) throw error;
  bootFailure = error;
  app = newApp(undefined);
}
const vitals = new Vitals();
const send = (message: WorkerMessage, then?: () => void) => {
  if (process.connected) process.send?.(message, undefined, {}, () => then?.());
  else then?.();
};
let shuttingDown = false;
/** The primary's `flotilla:serve`: its service thread ran the service's `beforeServe` hooks. */
const served = Promise.withResolvers<void>();
const primaryServes = () => {
  send(msg.awaitServe());
  return served.promise;
};
// a worker that received requests and died is no boot failure: the primary must know it before any heartbeat
onFirstRequest(() => send(msg.firstRequest(process.pid)));

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => app.logger.debug({ signal }, 'signal ignored: the primary drives the shutdown'));
}

const fatal = (kind: string) => (error: unknown) => {
  app.logger.fatal({ err: error }, `${kind}: the worker exits and the primary replaces it`);
  // the routes being served name the request that killed it (the primary counts such deaths by route)
  send(msg.fatal(process.pid, error instanceof Error ? error.message : String(error), app.requestRoutes()), () => process.exit(1));
  setTimeout(() => process.exit(1), 1_000).unref();
};
process.on('uncaughtException', fatal('uncaught exception'));
process.on('unhandledRejection', fatal('unhandled rejection'));

/** A start-up failure a restart will not fix: tell the primary in one human line, then exit. */
const bootFailed = (kind: BootFailedMessage['kind'], message: string, error: unknown) => {
  app.logger.fatal({ err: error, kind }, `the worker could not start: ${message}`);
  send(msg.bootFailed(process.pid, kind, message), () => process.exit(1));
  setTimeout(() => process.exit(1), 1_000).unref();
};

/**
 * The first snapshot is pushed this long after the worker listens (then every `cluster.metricsIntervalMs`):
 * not before its first responses, which a cold start waits for (bench/results/footprint-*.md).
 */
const FIRST_PUSH_DELAY_MS = 250;
/** An idle worker's snapshot is pushed this many `cluster.metricsIntervalMs` apart (its counters have not moved). */
const IDLE_PUSH_INTERVALS = 10;
const pushMetrics = async (final: boolean) => {
  try {
    send(msg.metrics(toMetricFamilies(await app.registry.getMetricsAsJSON()), final));
  } catch (error) {
    app.logger.error({ err: error }, 'metrics collection failed');
  }
};
/** The main thread stuck this long gets its stack logged by the watchdog thread (half the heartbeat timeout). */
const blockedLogMs = Math.max(1_000, config.cluster.heartbeatTimeoutMs / 2 || 5_000);
/** The watchdog's beat, once it runs (see `watch`). */
let beat = () => {};
// a snapshot when requests started or ended (or WebSockets moved) since the last one; an idle worker's (process metrics only)
// every IDLE_PUSH_INTERVALS intervals: collecting them costs a millisecond, and the primary's merge more
let pushedAt = { activity: -1, tick: 0 };
let tick = 0;
let metricsDueAt = 0;
// the worker's one periodic timer, for the watchdog's beat and the metrics push: an idle worker wakes once a period for both
const periodMs = Math.min(beatInterval(blockedLogMs), config.cluster.metricsIntervalMs);
setInterval(() => {
  beat();
  const now = Date.now();
  if (now < metricsDueAt) return;
  metricsDueAt = now + config.cluster.metricsIntervalMs - periodMs / 2;
  tick++;
  // requests, and WebSocket traffic (which passes no request)
  const activity = vitals.activity + app.socketActivity;
  if (activity === pushedAt.activity && tick - pushedAt.tick < IDLE_PUSH_INTERVALS) return;
  pushedAt = { activity, tick };
  void pushMetrics(false);
}, periodMs).unref();

/** Once the primary disconnects us after `shutdown-complete` (or after a short wait), the worker exits. */
const LINGER_MS = 1_000;

/**
 * `deadline`: the primary's (epoch ms), so the budget counts from its signal; none when the primary is gone.
 * `retire`: this worker alone leaves, the cluster goes on serving (see `ShutdownMessage`).
 */
const shutdown = async (reason: string, deadline?: number, retire = false) => {
  if (shuttingDown) return;
  shuttingDown = true;
  app.logger.info({ reason, deadline, retire }, 'worker shutting down');
  await app.close({ deadline, stayReady: retire });
  const code = app.cleanShutdown ? 0 : 1;
  if (!process.connected) process.exit(code);
  // Connections still in the IPC stream (node:cluster's, for a listener the service shares through it;
  // the primary's own, see HandedConnections) must not be lost with this process: stay until the
  // primary disconnects us, so each is refused and handed to another worker, or answered 503.
  process.once('disconnect', () => process.exit(code));
  setTimeout(() => process.exit(code), LINGER_MS).unref();
  // the last counts first: the primary keeps them in its sums once this worker is gone
  await pushMetrics(true);
  send(msg.shutdownComplete(process.pid, app.cleanShutdown));
};

/** Every message the primary sends a worker, handled here; `handle`: what came with it (a connection's socket). */
const fromPrimary = dispatcher<PrimaryMessage, unknown>({
  'flotilla:connection': (message, handle) => {
    if (handed === undefined) dropHandle(handle);
    else send(msg.handoffAck(handed.received(handle, message.head)));
  },
  // read by worker-entry.ts before this module loaded (the early worker's), once
  'flotilla:start': ignore,
  'flotilla:serve': () => served.resolve(),
  'flotilla:handoff-end': () => handed?.end(),
  'flotilla:deliver': (message) => topics.delivered(message),
  'flotilla:certificates': (message) =>
    app.useCertificates({ cert: message.cert, key: message.key, ca: message.ca === '' ? undefined : message.ca }),
  'flotilla:ping': (message) => send(msg.pong(message.seq, vitals.sample(), app.requestRoutes())),
  'flotilla:shutdown': (message) => void shutdown(message.retire ? 'retired' : 'primary', message.deadline, message.retire),
  'flotilla:rate-limit-counts': (message) => counterStore.answered(message),
  'flotilla:session-result': (message) => sessionStore.answered(message),
});
process.on('message', (message: unknown, handle: unknown) => {
  if (!isPrimaryMessage(message)) {
    if (isFlotillaMessage(message)) app.logger.warn({ message: describeInvalid(message) }, 'malformed message from the primary dropped');
    dropHandle(handle);
    return;
  }
  fromPrimary(message, handle);
});
// The primary is gone (crashed or killed): nobody will relay a shutdown, so start one. node:cluster
// would otherwise exit the worker at once (cutting in-flight requests, skipping the hooks) unless
// `exitedAfterDisconnect` is true: the worker leaves on its own terms, through the shutdown sequence.
if (cluster.worker) cluster.worker.exitedAfterDisconnect = true;
process.on('disconnect', () => {
  handed?.end();
  void shutdown('primary disconnected');
});

/**
 * The watchdog thread (`watchdog.ts`), once the worker listens: its start (an isolate of its own,
 * some 20 ms of CPU) stays off the cold start's path, on which it competed with the worker's own
 * setup. Until then, a worker stuck in its setup is the primary's start-up timeout's to end.
 */
function watch(): void {
  beat = startWatchdog(
    {
      primaryPid: process.ppid,
      blockedLogMs,
      orphanGraceMs: config.shutdown.timeoutMs + 2_000,
      bindings: { service: config.serviceName, pid: process.pid, worker: start.slot },
    },
    (error) => app.logger.error({ err: error }, 'the watchdog thread failed: no stack of a stuck event loop, no exit if the primary dies'),
  );
}

/** Runs the service's setup and listens; a failure a restart cannot fix ends here with `bootFailed`. */
async function boot(): Promise<void> {
  try {
    if (service.setup === undefined || bootFailure !== undefined) throw bootFailure;
    await service.setup(app);
  } catch (error) {
    if (error instanceof ConfigError && start.configFile !== undefined) {
      return bootFailed('config', locateProblems(start.configFile, error.problems).message, error);
    }
    return bootFailed('service', describeServiceError(error, start.servicePath), error);
  }
  // the service has `beforeServe` hooks: the primary's service thread runs them, then tells this worker to listen
  if (awaitsStartHooks(app)) await primaryServes();
  // told to leave while its setup ran (a reload's replacements came up first): the shutdown sequence ends it
  if (shuttingDown) return;
  const listening = app.listen();
  let address: { host: string; port: number };
  try {
    address = await app.ready();
  } catch (error) {
    listening.catch(() => {});
    if ((error as NodeJS.ErrnoException)?.code !== 'EADDRINUSE') throw error;
    return bootFailed('address-in-use', `port ${config.port} on ${config.host} is already in use`, error);
  }
  send(msg.listening(process.pid, address));
  watch();
  // the first snapshot once the first requests are answered: collecting it first costs some 10 ms of cold code
  setTimeout(() => void pushMetrics(false), FIRST_PUSH_DELAY_MS).unref();
  // the shutdown sequence (`shutdown` above) ends the process once the App has closed
  await listening;
}

await boot();
