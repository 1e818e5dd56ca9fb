import cluster from 'node:cluster';
import { loadService } from '../cluster/load-service.ts';
import { decodeWorkerStart, WORKER_ENV } from '../cluster/worker-env.ts';
import { adoptResolvedConfig } from '../config/validate.ts';
import { describeInvalid, isFlotillaMessage, isPrimaryMessage, msg, type WorkerMessage } from '../ipc/protocol.ts';
import { toMetricFamilies } from '../metrics/metric-families.ts';
import { App } from './app.ts';

/**
 * A cluster worker: builds the App from the config the primary validated,
 * runs the service's setup, listens, and from then on obeys the primary's
 * messages. Signals aimed at the whole process group (a terminal's Ctrl-C)
 * are ignored: shutdown comes from the primary only, so hooks never run twice.
 */
const start = decodeWorkerStart(process.env[WORKER_ENV]);
// the primary validated this config before forking: adopting it spares the worker compiling the schema again
const config = adoptResolvedConfig(start.config);
const app = new App(config, { role: 'worker', handleSignals: false, logBindings: { worker: start.slot } });
const send = (message: WorkerMessage) => {
  if (process.connected) process.send?.(message);
};
let shuttingDown = false;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => app.logger.debug({ signal }, 'signal ignored: the primary drives the shutdown'));
}

const fatal = (kind: string) => (error: unknown) => {
  app.logger.fatal({ err: error }, `${kind}: the worker exits and the primary replaces it`);
  send(msg.fatal(process.pid, error instanceof Error ? error.message : String(error)));
  process.exit(1);
};
process.on('uncaughtException', fatal('uncaught exception'));
process.on('unhandledRejection', fatal('unhandled rejection'));

/** Once the primary disconnects us after `shutdown-complete` (or after a short wait), the worker exits. */
const LINGER_MS = 1_000;

/** `deadline`: the primary's (epoch ms), so the budget counts from its signal; none when the primary is gone. */
const shutdown = async (reason: string, deadline?: number) => {
  if (shuttingDown) return;
  shuttingDown = true;
  app.logger.info({ reason, deadline }, 'worker shutting down');
  await app.close({ deadline });
  const code = app.cleanShutdown ? 0 : 1;
  if (!process.connected) process.exit(code);
  // Connections node:cluster handed us just before our listener closed are still in the IPC stream:
  // stay until the primary disconnects us, so each of them is refused and handed to another worker
  // instead of being lost with this process.
  process.once('disconnect', () => process.exit(code));
  setTimeout(() => process.exit(code), LINGER_MS).unref();
  send(msg.shutdownComplete(process.pid, app.cleanShutdown));
};

process.on('message', (message: unknown) => {
  if (!isPrimaryMessage(message)) {
    if (isFlotillaMessage(message)) app.logger.warn({ message: describeInvalid(message) }, 'malformed message from the primary dropped');
    return;
  }
  if (message.type === 'flotilla:shutdown') {
    void shutdown('primary', message.deadline);
  } else {
    app.registry.getMetricsAsJSON().then(
      (metrics) => send(msg.metricsResponse(message.id, toMetricFamilies(metrics))),
      (error: unknown) => app.logger.error({ err: error }, 'metrics collection failed'),
    );
  }
});
// The primary is gone (crashed or killed): nobody will relay a shutdown, so start one. node:cluster
// would otherwise exit the worker at once (cutting in-flight requests, skipping the hooks) unless
// `exitedAfterDisconnect` is true: the worker leaves on its own terms, through the shutdown sequence.
if (cluster.worker) cluster.worker.exitedAfterDisconnect = true;
process.on('disconnect', () => void shutdown('primary disconnected'));

const setup = await loadService<App>(start.servicePath);
await setup(app);
const listening = app.listen();
const address = await app.ready();
send(msg.listening(process.pid, address));
await listening;
if (!cluster.isWorker) process.exit(0);
