import { Agent, request } from 'node:http';
import { METRIC_ROUTES, METRIC_STATUSES } from '../services/data.ts';
import { get } from './http.ts';
import { timeScrapes } from './scrape.ts';
import { freePort, type Launch, ServerProcess } from './server-process.ts';
import { median, percentile } from './stats.ts';

/** The 50-route cluster with `GET /hang` and the watchdog off (`heartbeatTimeoutMs: 0`). */
export const SCRAPE_STUCK_CLUSTER: Launch = { entry: 'services/metrics-cluster-stuck.yaml', readyLines: 2 };

export interface Timings {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface StuckScrapeResult {
  healthy: Timings;
  stuck: Timings;
  /** `flotilla_scrape_workers_stale` / `_missing` in the last scrape with the worker stuck. */
  stale: number | undefined;
  missing: number | undefined;
  /** Samples (non-comment lines) and bytes of the exposition, healthy / stuck. */
  samples: [number, number];
  bytes: [number, number];
  /** How long the worker had been stuck when the stuck scrapes began. */
  stuckForMs: number;
}

/**
 * The primary's `/metrics` of a 2-worker cluster with 50 routes (every route ×
 * status 200/400/404/500 requested 4 times on new connections, so both workers
 * hold series of every route), timed over `scrapes` sequential scrapes on one
 * keep-alive connection: (a) both workers healthy, then (b) one of them stuck in
 * `while (true) {}` (`GET /hang`; watchdog off, so it stays stuck), once its
 * snapshot is older than 3 push intervals.
 */
export async function scrapeWithStuckWorker(scrapes: number): Promise<StuckScrapeResult> {
  const metricsPort = await freePort();
  const server = await ServerProcess.start(SCRAPE_STUCK_CLUSTER, await freePort(), { METRICS_PORT: String(metricsPort) });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let hang: ReturnType<typeof request> | undefined;
  try {
    const paths = Array.from({ length: METRIC_ROUTES }, (_, i) => METRIC_STATUSES.map((s) => `/m${i}?status=${s}`)).flat();
    for (let i = 0; i < 4; i++) await Promise.all(paths.map((p) => get(server.port, p)));
    await new Promise((r) => setTimeout(r, 1_500)); // both workers have pushed their series
    const time = () => timeScrapes(metricsPort, agent, scrapes);
    const healthy = await time();

    const stuckAt = performance.now();
    hang = request({ host: '127.0.0.1', port: server.port, path: '/hang', agent: false });
    hang.on('error', () => {});
    hang.end();
    // the stuck worker's snapshot goes stale after 3 intervals (3 s by default): wait for the primary to say so
    let stale: number | undefined;
    for (let i = 0; i < 100 && stale !== 1; i++) {
      await new Promise((r) => setTimeout(r, 100));
      stale = sample((await get(metricsPort, '/metrics', {}, agent)).body, 'flotilla_scrape_workers_stale');
    }
    if (stale !== 1) throw new Error(`no worker became stale after GET /hang (flotilla_scrape_workers_stale ${stale})`);
    const stuckForMs = performance.now() - stuckAt;
    const stuck = await time();
    return {
      healthy: timings(healthy.times),
      stuck: timings(stuck.times),
      stale: sample(stuck.body, 'flotilla_scrape_workers_stale'),
      missing: sample(stuck.body, 'flotilla_scrape_workers_missing'),
      samples: [countSamples(healthy.body), countSamples(stuck.body)],
      bytes: [Buffer.byteLength(healthy.body), Buffer.byteLength(stuck.body)],
      stuckForMs,
    };
  } finally {
    hang?.destroy();
    agent.destroy();
    await server.stop();
  }
}

export interface SnapshotCost {
  iterations: number;
  /** CPU (user + system of this process, `process.cpuUsage`) per push, µs: mean over the iterations. */
  cpuUs: number;
  /** Wall time per push, µs: median and p99. */
  wallP50Us: number;
  wallP99Us: number;
  /** The share of one core at the default 1 s push interval, %. */
  corePct: number;
  /** Median wall time of each step, µs. */
  steps: { getMetricsAsJSON: number; toMetricFamilies: number; stringify: number };
  /** Size of the serialized message (what node:child_process writes to the IPC channel), bytes; number of families and series. */
  bytes: number;
  families: number;
  series: number;
}

/**
 * The CPU cost of one metrics push in a worker with the scrape benchmark's 50
 * routes: in this process, an App built as a cluster worker builds it (with
 * the process metrics in its registry), the same 50 routes, traffic
 * through `app.inject` (every route × status 200/400/404/500, 4 times), then
 * `iterations` times what a worker does every `cluster.metricsIntervalMs`:
 * `toMetricFamilies(await registry.getMetricsAsJSON())` and serializing the
 * message as node:child_process does for IPC (`JSON.stringify`).
 */
export async function snapshotCost(iterations: number): Promise<SnapshotCost> {
  // loaded here, not with the orchestrator: the rest of the benchmark never loads flotilla in this process
  const { App } = await import('flotilla');
  const { msg } = await import('../../src/ipc/protocol.ts');
  const { toMetricFamilies } = await import('../../src/metrics/metric-families.ts');
  const { registerMetricRoutes } = await import('../services/metrics-routes.ts');
  // as src/worker/worker-main.ts builds a worker's App: its registry carries the process metrics
  const app = new App(
    { serviceName: 'metrics', logging: { level: 'silent', requests: false } },
    { role: 'worker', handleSignals: false, runSchedulers: false, serveMetrics: false, processMetrics: true },
  );
  registerMetricRoutes(app);
  for (let round = 0; round < 4; round++)
    for (let i = 0; i < METRIC_ROUTES; i++) for (const s of METRIC_STATUSES) await app.inject(`/m${i}?status=${s}`);
  const registry = app.registry;
  if (registry.getSingleMetric('process_cpu_user_seconds_total') === undefined)
    throw new Error("the App's registry has no process metrics: build it as src/worker/worker-main.ts does");
  const push = async () => JSON.stringify(msg.metrics(toMetricFamilies(await registry.getMetricsAsJSON()), false));
  for (let i = 0; i < 100; i++) await push(); // warm-up: JIT
  const walls: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await push();
    walls.push((performance.now() - t0) * 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = (cpu.user + cpu.system) / iterations;
  // each step alone, for where the time goes
  const steps = { getMetricsAsJSON: [] as number[], toMetricFamilies: [] as number[], stringify: [] as number[] };
  let bytes = 0;
  let families = 0;
  let series = 0;
  for (let i = 0; i < Math.min(iterations, 300); i++) {
    const t0 = performance.now();
    const json = await registry.getMetricsAsJSON();
    const t1 = performance.now();
    const fams = toMetricFamilies(json);
    const t2 = performance.now();
    const text = JSON.stringify(msg.metrics(fams, false));
    const t3 = performance.now();
    steps.getMetricsAsJSON.push((t1 - t0) * 1000);
    steps.toMetricFamilies.push((t2 - t1) * 1000);
    steps.stringify.push((t3 - t2) * 1000);
    bytes = Buffer.byteLength(text);
    families = fams.length;
    series = json.reduce((n, m) => n + (m.values?.length ?? 0), 0);
  }
  return {
    iterations,
    cpuUs,
    wallP50Us: median(walls),
    wallP99Us: percentile(walls, 99),
    corePct: (cpuUs / 1_000_000) * 100,
    steps: {
      getMetricsAsJSON: median(steps.getMetricsAsJSON),
      toMetricFamilies: median(steps.toMetricFamilies),
      stringify: median(steps.stringify),
    },
    bytes,
    families,
    series,
  };
}

function timings(times: readonly number[]): Timings {
  return { count: times.length, p50Ms: median(times), p99Ms: percentile(times, 99), maxMs: Math.max(...times) };
}

function countSamples(body: string): number {
  return body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
}

/** The value of an unlabelled sample in an exposition. */
function sample(body: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(body);
  return match === null ? undefined : Number(match[1]);
}
