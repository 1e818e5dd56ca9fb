/**
 * The primary's service thread (its entry is `service-thread.ts`, started by `service-host.ts`): the service's
 * setup given a `ServicePart` (`app.role === 'primary'`), where its schedulers run
 * once for the whole cluster and its shutdown hooks run at the cluster's
 * shutdown. It lives in a worker thread so that a job computing for seconds
 * never delays what the primary's main thread does: hand connections to the
 * workers, heartbeats, `/metrics`, signals. It speaks the workers' protocol
 * (`src/ipc/protocol.ts`) over its message port: metric snapshots, heartbeat
 * answers (the first snapshot follows the start of its schedulers), and
 * `flotilla:shutdown-complete` after its hooks.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from 'pino';
import { type App, ServicePart } from '../app/index.ts';
import { ConfigError } from '../config/config-error.ts';
import { markSettingsFallbacks } from '../config/fallback-secrets.ts';
import type { FallbackValue } from '../config/interpolate.ts';
import { locateProblems } from '../config/load-file.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { adoptResolvedConfig } from '../config/validate.ts';
import type { TopicPayload } from '../coordination/replica-topics.ts';
import { dispatcher, ignore } from '../ipc/dispatch.ts';
import { type BootFailedMessage, isPrimaryMessage, msg, type PrimaryMessage, type WorkerMessage } from '../ipc/protocol.ts';
import { toMetricFamilies } from '../metrics/metric-families.ts';
import { describeServiceError } from '../process/boot-failure.ts';
import { loadService } from '../process/load-service.ts';
import { importPreloads } from '../process/preload.ts';
import { Vitals } from '../process/vitals.ts';
import { encodePayload } from '../utils/payload.ts';

/** What the service host hands the thread. */
export interface ServiceThreadData {
  config: ResolvedConfig;
  servicePath: string;
  /** The config file, where `settings` problems are located. */
  configFile?: string;
  /** The `settings` on development fallbacks the service's setup refuses if secret (see fallback-secrets.ts). */
  settingsFallbacks?: readonly FallbackValue[];
}

const port = parentPort;
if (port === null) throw new Error('service-thread.ts runs as a worker thread of the flotilla primary');
const { config, servicePath, configFile, settingsFallbacks = [] } = workerData as ServiceThreadData;

/**
 * A start-up failure a restart will not fix (a preload or the service's module or setup throws, its
 * settings are invalid): the primary hears it in one human line, as from a worker, and stops.
 */
const bootFailed = (kind: BootFailedMessage['kind'], message: string): never => {
  port.postMessage(msg.bootFailed(process.pid, kind, message));
  process.exit(1);
};

try {
  // the config's `preload` (an OpenTelemetry SDK's registration) before the service: worker threads run no `--import`
  await importPreloads(config.preload);
} catch (error) {
  bootFailed('service', (error as Error).message);
}
const post = (message: WorkerMessage) => port.postMessage(message);
const adopted = adoptResolvedConfig(config);
markSettingsFallbacks(adopted, settingsFallbacks);
/** The service's module, loaded before its part: its `defineService({ logger })` makes the part's logger, called here once. */
const { setup, part } = await (async () => {
  try {
    const setup = await loadService<App>(servicePath);
    const logger = setup.logger?.() as Logger | undefined;
    // a cron job's app.publish: the primary hands it to every worker (src/primary/topic-relay.ts)
    const publish = (topic: string, payload: TopicPayload) => {
      const { data, binary } = encodePayload(payload);
      post(msg.publish(topic, data, binary));
    };
    return { setup, part: new ServicePart(adopted, { role: 'primary', thread: 'service' }, publish, logger) };
  } catch (error) {
    return bootFailed('service', describeServiceError(error, servicePath));
  }
})();
const vitals = new Vitals();

/** The shutdown began: a `beforeServe` hook it aborted is no failure of the thread. */
let closing = false;

/** The last snapshot pushed: an unchanged one is not pushed again (the primary keeps the last one). */
let pushed = '';
const pushMetrics = async (final: boolean) => {
  try {
    const families = toMetricFamilies(await part.registry.getMetricsAsJSON());
    const text = JSON.stringify(families);
    if (text === pushed && !final) return;
    pushed = text;
    post(msg.metrics(families, final));
  } catch (error) {
    part.logger.error({ err: error }, 'metrics collection failed');
  }
};
const pushing = setInterval(() => void pushMetrics(false), config.cluster.metricsIntervalMs);

/** Every message the primary sends its service thread, handled here: heartbeats and the shutdown; the rest is a worker's. */
const fromPrimary = dispatcher<PrimaryMessage>({
  'flotilla:ping': (message) => post(msg.pong(message.seq, vitals.sample())),
  'flotilla:shutdown': (message) => {
    closing = true;
    void part.close(message.deadline).then(async () => {
      clearInterval(pushing);
      await pushMetrics(true);
      post(msg.shutdownComplete(process.pid, part.cleanShutdown));
      port.close();
    });
  },
  'flotilla:start': ignore,
  'flotilla:connection': ignore,
  'flotilla:handoff-end': ignore,
  'flotilla:certificates': ignore,
  'flotilla:serve': ignore,
  'flotilla:deliver': ignore,
  'flotilla:rate-limit-counts': ignore,
  'flotilla:session-result': ignore,
});
port.on('message', (message: unknown) => {
  if (isPrimaryMessage(message)) fromPrimary(message, undefined);
});

try {
  // the setup is typed for an App; the part has its registration API (see src/app/service-part.ts)
  await setup(part as unknown as App);
} catch (error) {
  if (error instanceof ConfigError && configFile !== undefined) bootFailed('config', locateProblems(configFile, error.problems).message);
  bootFailed('service', describeServiceError(error, servicePath));
}
try {
  // the `beforeServe` hooks: the workers that await them listen once they are done; one that fails ends the thread
  // with its error, which the host restarts with backoff (a crash loop stops the cluster)
  await part.prepare();
} catch (error) {
  if (!closing) throw error;
}
if (closing) {
  // the shutdown's handler above ends the thread once the hooks ran
} else if (part.idle) {
  post(msg.serviceReady());
  // nothing to run here: the last snapshot (the service's own metrics, if any), then the thread ends
  clearInterval(pushing);
  await pushMetrics(true);
  post(msg.serviceIdle());
  process.exit(0);
} else {
  post(msg.serviceReady());
  await part.start();
  // the first snapshot tells the host that the schedulers started
  void pushMetrics(false);
}
