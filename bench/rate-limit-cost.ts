/**
 * What a rate limit adds per request (docs/guides/rate-limits.md): a 2-worker cluster (`flotilla start`,
 * from the sources) serving the same reply on a route without a limit (`/open`), on one with a limit
 * that admits every request (`/limited`: each is counted, which is the cost) and on one that refuses
 * them (`/refused`: the 429 problem), with the counts kept by the primary (IPC) and, with
 * `coordination.url`, by a throwaway redis-server. wrk, one connection (the latency each request
 * pays) and 32 connections (throughput); the routes alternate within each round, so that each
 * pair is measured side by side. Also a standalone App, whose counts are in-process (memory store).
 *
 *   node --conditions=source bench/rate-limit-cost.ts [--rounds 3] [--duration 3]
 *
 * Writes bench/results/rate-limit.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { App } from '../src/app/app.ts';
import { ClusterProcess, configYaml } from '../tools/cluster-process.ts';
import { RedisServer, redisInstalled } from '../tools/redis-server.ts';
import { CLK_TCK, cpuTicks, processTree } from './lib/proc.ts';
import { median, sig } from './lib/stats.ts';
import { ensureWrk, runWrk, type WrkResult } from './lib/wrk.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '3' } } });
const ROUNDS = Number(values.rounds);
const DURATION_S = Number(values.duration);
const CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const SERVICE = fileURLToPath(new URL('./services/rate-limited.ts', import.meta.url));
const ROUTES = ['/open', '/limited', '/refused'] as const;
const LOADS = [
  { name: '1 connection', connections: 1 },
  { name: '32 connections', connections: 32 },
] as const;

/** A wrk run with the CPU time the server spent on it per request, in µs: all its processes, and the primary's. */
interface Sample extends WrkResult {
  cpuUs: number;
  primaryUs: number | undefined;
}
type Samples = Map<string, Sample[]>;

/** The server's CPU time so far, in seconds: the tree of a cluster's primary (and its share), or this process. */
function serverCpu(primary: number | undefined): { all: number; primary: number | undefined } {
  if (primary === undefined) {
    const { user, system } = process.cpuUsage();
    return { all: (user + system) / 1e6, primary: undefined };
  }
  const all = processTree(primary).reduce((sum, pid) => sum + cpuTicks(pid), 0) / CLK_TCK;
  return { all, primary: cpuTicks(primary) / CLK_TCK };
}

async function startCluster(dir: string, name: string, extra: Record<string, unknown>): Promise<ClusterProcess> {
  const file = join(dir, `${name}.yaml`);
  const config = { serviceName: `bench-${name}`, service: SERVICE, logging: { level: 'warn', requests: false }, ...extra };
  // info-level logs are what ClusterProcess.ready() reads
  writeFileSync(file, configYaml(config, { logging: { level: 'info', requests: false } }));
  const cluster = new ClusterProcess({ cli: CLI, configFile: file, execArgv: ['--conditions=source'] });
  await cluster.ready(2, 60_000);
  return cluster;
}

async function measure(port: number, primary?: number): Promise<Samples> {
  const samples: Samples = new Map();
  // the first request of /refused is admitted, the rest refused; warm every route up
  for (const path of ROUTES) await runWrk({ port, path, connections: 8, durationS: 1, headers: {} });
  for (let round = 0; round < ROUNDS; round++) {
    for (const load of LOADS) {
      for (const path of ROUTES) {
        const before = serverCpu(primary);
        const result = await runWrk({ port, path, connections: load.connections, durationS: DURATION_S, headers: {} });
        const after = serverCpu(primary);
        const perRequest = (s: number) => (s * 1e6) / Math.max(1, result.requests);
        const sample: Sample = {
          ...result,
          cpuUs: perRequest(after.all - before.all),
          primaryUs: after.primary === undefined || before.primary === undefined ? undefined : perRequest(after.primary - before.primary),
        };
        const key = `${load.name} ${path}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
      }
    }
  }
  return samples;
}

const med = (results: readonly Sample[], pick: (r: Sample) => number) => median(results.map(pick));

function table(title: string, samples: Samples): string {
  const lines = [
    `### ${title}`,
    '',
    '| load | route | req/s | p50 ms | p99 ms | added p50 µs | CPU µs/request | of which primary | errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const load of LOADS) {
    const open = samples.get(`${load.name} /open`) ?? [];
    const p50Open = med(open, (r) => r.latencyMs.p50);
    for (const path of ROUTES) {
      const results = samples.get(`${load.name} ${path}`) ?? [];
      const p50 = med(results, (r) => r.latencyMs.p50);
      const errors = results.reduce((n, r) => n + r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout, 0);
      const added = path === '/open' ? '—' : String(Math.round((p50 - p50Open) * 1000));
      const primaryUs = results.every((r) => r.primaryUs !== undefined) ? String(Math.round(med(results, (r) => r.primaryUs ?? 0))) : '—';
      lines.push(
        `| ${load.name} | \`${path}\` | ${sig(med(results, (r) => r.rps))} | ${sig(p50)} | ${sig(med(results, (r) => r.latencyMs.p99))} | ${added} | ${Math.round(med(results, (r) => r.cpuUs))} | ${primaryUs} | ${errors} |`,
      );
    }
  }
  return lines.join('\n');
}

/** A standalone App (memory store: counted synchronously, in-process) serving the bench service's routes. */
async function standalone(): Promise<App> {
  const app = new App({ port: 0, host: '127.0.0.1', logging: { level: 'warn', requests: false } }, { handleSignals: false });
  const service = (await import('./services/rate-limited.ts')).default as unknown as (app: App) => void;
  service(app);
  void app.listen();
  await app.ready();
  return app;
}

ensureWrk();
const loadBefore = loadavg()[0] ?? 0;
const dir = mkdtempSync(join(tmpdir(), 'flotilla-rate-bench-'));
const sections: string[] = [];
let redis: RedisServer | undefined;
try {
  const alone = await standalone();
  sections.push(table('Standalone App: counted in-process (memory store, synchronous)', await measure((await alone.ready()).port)));
  await alone.close();
  const ipc = await startCluster(dir, 'ipc', {});
  sections.push(table('In-cluster: counted by the primary (IPC), 2 workers', await measure(ipc.appPort, ipc.pid)));
  ipc.kill();
  if (redisInstalled()) {
    redis = await RedisServer.create();
    const shared = await startCluster(dir, 'redis', { coordination: { url: redis.url } });
    sections.push(
      table('Across replicas: counted in Redis (worker → primary → redis-server), 2 workers', await measure(shared.appPort, shared.pid)),
    );
    shared.kill();
  } else sections.push('### Redis\n\nredis-server is not installed: not measured.');
} finally {
  await redis?.dispose();
  rmSync(dir, { recursive: true, force: true });
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const load = `${loadBefore.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end`;
const report = `# Rate limits: what a limited request costs

Measured ${new Date().toISOString().slice(0, 10)} by \`node --conditions=source bench/rate-limit-cost.ts --rounds ${ROUNDS} --duration ${DURATION_S}\`
on ${availableParallelism()} CPUs (${cpu}), shared with other work: the figures of one table were measured side by side
(the routes alternate within each round; medians of ${ROUNDS} rounds of ${DURATION_S} s), which is what to compare.
The cluster runs from the TypeScript sources with \`logging.requests: false\`; wrk (1 thread) runs on the same machine.
The machine's 1-minute load average was ${load}: above the CPU count, latencies and req/s swing between runs (up to
2×); the CPU time per request swings much less.

- \`/open\`: no rate limit. \`/limited\`: a limit that admits every request, each counted (the cost of a
  limited request that is admitted). \`/refused\`: a limit of 1, every request answered 429 \`RATE_LIMITED\`.
- "added p50": the route's median latency minus \`/open\`'s in the same load, in µs. "CPU µs/request": the CPU
  time the server spent per request (a cluster: its primary, workers and service thread, from \`/proc\`; the
  standalone App: the measuring process, which runs it), steadier than the latency on a shared machine; "of which
  primary": the primary process's share (the IPC counting, and the Redis client; redis-server itself is not counted).

${sections.join('\n\n')}
`;
writeFileSync(fileURLToPath(new URL('./results/rate-limit.md', import.meta.url)), report);
process.stdout.write(report);
