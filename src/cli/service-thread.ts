/**
 * The primary's service thread (started by `src/primary/service-host.ts`):
 * the service's setup with `app.role === 'primary'`, where its schedulers run
 * once for the whole cluster and its shutdown hooks run at the cluster's
 * shutdown. It lives in a worker thread so that a job computing for seconds
 * never delays what the primary's main thread does: hand connections to the
 * workers, heartbeats, `/metrics`, signals. It speaks the workers' protocol
 * (`src/ipc/protocol.ts`) over its message port: metric snapshots, heartbeat
 * answers (the first snapshot follows the start of its schedulers), and
 * `flotilla:shutdown-complete` after its hooks.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { App } from '../app/app.ts';
import { loadService } from '../cluster/load-service.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { adoptResolvedConfig } from '../config/validate.ts';
import { isPrimaryMessage, msg, type WorkerMessage } from '../ipc/protocol.ts';
import { toMetricFamilies } from '../metrics/metric-families.ts';
import { Vitals } from '../worker/vitals.ts';

/** What the service host hands the thread. */
export interface ServiceThreadData {
  config: ResolvedConfig;
  servicePath: string;
}

const port = parentPort;
if (port === null) throw new Error('service-thread.ts runs as a worker thread of the flotilla primary');
const { config, servicePath } = workerData as ServiceThreadData;
const app = new App(adoptResolvedConfig(config), {
  role: 'primary',
  handleSignals: false,
  logBindings: { role: 'primary', thread: 'service' },
});
const vitals = new Vitals();
const post = (message: WorkerMessage) => port.postMessage(message);

const pushMetrics = async (final: boolean) => {
  try {
    post(msg.metrics(toMetricFamilies(await app.registry.getMetricsAsJSON()), final));
  } catch (error) {
    app.logger.error({ err: error }, 'metrics collection failed');
  }
};
const pushing = setInterval(() => void pushMetrics(false), config.cluster.metricsIntervalMs);

port.on('message', (message: unknown) => {
  if (!isPrimaryMessage(message)) return;
  if (message.type === 'flotilla:ping') {
    post(msg.pong(message.seq, vitals.sample()));
    return;
  }
  void app.close({ deadline: message.deadline }).then(async () => {
    clearInterval(pushing);
    await pushMetrics(true);
    post(msg.shutdownComplete(process.pid, app.cleanShutdown));
    port.close();
  });
});

await (await loadService<App>(servicePath))(app);
const listening = app.listen();
await app.ready();
// the first snapshot tells the host that the schedulers started
void pushMetrics(false);
await listening;
