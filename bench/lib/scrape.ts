import { Agent } from 'node:http';
import { METRIC_ROUTES, METRIC_STATUSES } from '../services/data.ts';
import { get } from './http.ts';
import { freePort, type Launch, ServerProcess } from './server-process.ts';
import { median, percentile } from './stats.ts';

export const SCRAPE_CLUSTER: Launch = { entry: 'services/metrics-cluster.yaml', readyLines: 2 };
export const SCRAPE_STANDALONE: Launch = { entry: 'services/metrics-standalone.ts', readyLines: 1 };

export interface ScrapeResult {
  scrapes: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Size of the exposition text and its number of samples (non-comment lines). */
  bytes: number;
  samples: number;
  /** Distinct `route` label values of `http_requests_total` seen in the last scrape. */
  routes: number;
}

/**
 * Starts the 50-route service, sends every route × status a few times on fresh
 * connections (so that both cluster workers see them), then times `scrapes`
 * sequential scrapes over one keep-alive connection, as Prometheus does.
 */
export async function scrapeLatency(launch: Launch, scrapes: number): Promise<ScrapeResult> {
  const metricsPort = await freePort();
  const server = await ServerProcess.start(launch, await freePort(), { METRICS_PORT: String(metricsPort) });
  try {
    const paths = Array.from({ length: METRIC_ROUTES }, (_, i) => METRIC_STATUSES.map((s) => `/m${i}?status=${s}`)).flat();
    for (let i = 0; i < 4; i++) await Promise.all(paths.map((p) => get(server.port, p)));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    // cluster workers push their metrics every second: time the scrapes once every route is in the exposition
    const deadline = performance.now() + 5_000;
    while (routesIn((await get(metricsPort, '/metrics', {}, agent)).body) < METRIC_ROUTES && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const { times, body } = await timeScrapes(metricsPort, agent, scrapes);
    agent.destroy();
    return {
      scrapes,
      p50Ms: median(times),
      p99Ms: percentile(times, 99),
      maxMs: Math.max(...times),
      bytes: Buffer.byteLength(body),
      samples: body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length,
      routes: routesIn(body),
    };
  } finally {
    await server.stop();
  }
}

/** `scrapes` sequential scrapes of `/metrics` over `agent`: each one's time, and the last body. */
export async function timeScrapes(port: number, agent: Agent, scrapes: number): Promise<{ times: number[]; body: string }> {
  const times: number[] = [];
  let body = '';
  for (let i = 0; i < scrapes; i++) {
    const r = await get(port, '/metrics', {}, agent);
    if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
    times.push(r.ms);
    body = r.body;
  }
  return { times, body };
}

/** Distinct `route` label values of `http_requests_total` in an exposition. */
function routesIn(body: string): number {
  return new Set([...body.matchAll(/^http_requests_total\{[^}]*route="([^"]+)"/gm)].map((m) => m[1])).size;
}
