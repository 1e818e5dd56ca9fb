/**
 * `npm run bench -- --cluster-compare`: three 2-worker clusters serving the list route side by side,
 * flotilla's (the CLI, its default balancing), Fastify 5 in node:cluster and Platformatic Watt
 * (the same Fastify app in 2 worker threads), all with the request log line off, in alternating
 * rounds of wrk with keep-alive and with a new connection per request, at 64 and 256 connections.
 * The same machinery as the main run: `loadRun` (wrk, CPU of the whole process tree from /proc),
 * the same pinning, parity check and medians. See bench/README.md, "Cluster comparison".
 */
import { readFileSync } from 'node:fs';
import { listeningSocketHolders } from '../../tools/proc.ts';
import type { Contender, Scenario } from './contenders.ts';
import { type LoadSettings, loadRun, type Run } from './load.ts';
import { machineMeta, packageVersion } from './meta.ts';
import { checkParity } from './parity.ts';
import { processTree, waitQuiet } from './proc.ts';
import { freePort, ROOT, runtime, ServerProcess } from './server-process.ts';
import { NOISY_PCT, pairedRatio, type Row, summarize } from './summary.ts';
import { ensureWatt, type Watt } from './watt.ts';

export const FLOTILLA = 'flotilla-cluster';
export const FASTIFY = 'fastify-cluster';
export const WATT = 'watt';

/** The report's notes: how each figure is measured. */
export const CLUSTER_COMPARE_NOTES: readonly string[] = [
  "The contenders: flotilla `servers/flotilla-cluster-compare.yaml` (`flotilla start`, env: production, logging.requests: false, cluster.balancing not set: the default); Fastify `servers/fastify-cluster.ts` with LOG_REQUESTS=false (Fastify's disableRequestLogging); Watt `servers/watt/watt.json` (`wattpm start`: workers 2, logger.level silent, reuseTcpPorts left to its default) running `servers/watt/items/` (@platformatic/node, the Fastify app of `services/fastify-items.ts` with the request log off). All three with NODE_ENV=production, CORS, the security headers, a prom-client counter + histogram per request, request ids; their pino loggers write to stdout → /dev/null.",
  "CPU s / 1k req: utime + stime from /proc/<pid>/stat of every process of the tree (the started process and its descendants; each process's figure covers all its threads), read before and after each run, per 1 000 completed requests. Watt is one process: its main thread, its 2 worker threads and every helper thread.",
  "Primary / main share: the primary process's CPU ÷ the tree's (flotilla, Fastify); for Watt, everything but its worker threads (`items:0`, `items:1`, from /proc/<pid>/task/<tid>/stat): the main thread, V8's and libuv's helper threads, ÷ the process's. Busiest worker's share: its CPU ÷ the workers'. Connections (keep-alive): halfway through a run, the established connections each worker process holds; not measurable per thread (Watt).",
  'non-2xx: the responses with a status of 400 or more (wrk counts them as `status` errors; the route never redirects). Socket errors: connect, read, write errors and timeouts (5 s).',
  `Ratios ÷ flotilla: taken round by round (the two ran seconds apart) and their median. noise %: CPU time of every other process (and steal) on the machine during a run, in % of one core, the idle contenders included; a run above ${NOISY_PCT} % is measured again once the machine is idle (twice at most), and left out of the medians when 3 quieter rounds exist.`,
  'A new connection per request: wrk sends `Connection: close`, each server closes the connection after its reply and wrk opens another; the kernel reuses the loopback TIME_WAIT sockets (net.ipv4.tcp_tw_reuse).',
];

/** A contender of the comparison: a launch, the versions it runs, and (Watt) the names of its worker threads. */
export interface CompareContender extends Contender {
  versions: Record<string, string>;
  workerThreads?: RegExp;
}

/** One case: the list route with keep-alive or `Connection: close`, at a number of connections. */
export interface CompareCase extends Scenario {
  connections: number;
}

const PATH = '/items?page=3&limit=20';

/** Keep-alive and a new connection per request, each at 64 and 256 connections. */
export const COMPARE_CASES: readonly CompareCase[] = [64, 256].flatMap((connections) => [
  { name: `keep-alive-${connections}`, title: `keep-alive, ${connections} connections`, path: PATH, keepAlive: true, connections },
  {
    name: `close-${connections}`,
    title: `a new connection per request (Connection: close), ${connections} connections`,
    path: PATH,
    headers: { Connection: 'close' },
    keepAlive: false,
    connections,
  },
]);

/** The three contenders, each with 2 workers, the request log line off and NODE_ENV=production. */
export function compareContenders(watt: Watt): CompareContender[] {
  const flotilla = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }).version;
  const fastify = packageVersion('fastify');
  return [
    {
      name: FLOTILLA,
      title: 'flotilla cluster, 2 workers, default balancing (CLI)',
      entry: 'servers/flotilla-cluster-compare.yaml',
      readyLines: 2,
      env: { WORKERS: '2', NODE_ENV: 'production' },
      pinned: true,
      versions: { flotilla: `${flotilla} (commit ${String(machineMeta('')['commit'])})` },
    },
    {
      name: FASTIFY,
      title: 'Fastify 5 in node:cluster, 2 workers (round robin)',
      entry: 'servers/fastify-cluster.ts',
      readyLines: 2,
      env: { LOG_REQUESTS: 'false', NODE_ENV: 'production' },
      pinned: true,
      versions: { fastify, '@fastify/cors': packageVersion('@fastify/cors'), '@fastify/compress': packageVersion('@fastify/compress') },
    },
    {
      name: WATT,
      title: 'Platformatic Watt, 2 workers (the same Fastify app)',
      entry: 'servers/watt/watt.json',
      script: [watt.cli, 'start', 'bench/servers/watt'],
      readyLines: 2,
      // the application's entry: compiled JavaScript, or with --source the TypeScript file
      env: { WATT_ENTRY_EXT: runtime.source ? 'ts' : 'js', NODE_ENV: 'production' },
      pinned: true,
      versions: { ...watt.versions, fastify },
      workerThreads: /^items:\d+$/,
    },
  ];
}

/** Who holds the listening sockets on the server's port: roles within its process tree (`primary`, `worker 1`, `process`). */
function acceptors(server: ServerProcess): string {
  const tree = processTree(server.pid);
  const workers = tree.slice(1).sort((a, b) => a - b);
  const role = (pid: number) =>
    pid === server.pid ? (tree.length === 1 ? 'the process' : 'primary') : `worker ${workers.indexOf(pid) + 1}`;
  const sockets = listeningSocketHolders(server.port).map((holders) => holders.filter((pid) => tree.includes(pid)));
  return `${sockets.length} listening socket${sockets.length === 1 ? '' : 's'}: ${sockets.map((h) => h.map(role).join(' + ')).join('; ')}`;
}

/** The medians of a contender as the main report has them ({@link Row}), with what this comparison adds. */
export interface CompareRow extends Pick<Row, 'contender' | 'title' | 'rounds' | 'roundsUsed' | 'rps' | 'rpsRange' | 'p50Ms' | 'p99Ms'> {
  /** CPU-seconds of the whole process tree (every process and thread) per 1 000 requests. */
  cpuPer1k: number;
  /** Responses with a status of 400 or more, over every round. */
  non2xx: number;
  /** Connect, read, write errors and timeouts, over every round. */
  socketErrors: number;
  maxForeignPct: number;
  /** ÷ flotilla's, round by round, median. */
  rpsVsFlotilla: number;
  cpuVsFlotilla: number;
  primarySharePct?: number;
  busiestWorkerPct?: number;
  busiestConnectionsPct?: number;
}

export interface CompareResults {
  meta: Record<string, unknown> & { date: string };
  contenders: { name: string; title: string; versions: Record<string, string>; accepts: string }[];
  cases: CompareCase[];
  rows: Record<string, CompareRow[]>;
  parity: Record<string, string[]>;
  runs: Run[];
}

export interface CompareSettings {
  rounds: number;
  durationS: number;
  warmupS: number;
  /** Case names to run (default: all four). */
  only?: readonly string[];
  serverCore: number | undefined;
  wrkCore: number | undefined;
  log: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The contenders of round `round` (1…): the order turns by one each round, so that none always runs after the same one. */
function turn<T>(list: readonly T[], round: number): T[] {
  const k = Math.max(0, round - 1) % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

/** Medians, errors and ratios to flotilla of each contender in one case. */
function rowsOf(runs: readonly Run[], contenders: readonly CompareContender[], c: CompareCase): CompareRow[] {
  return summarize(runs, contenders, c).map((r) => {
    const all = runs.filter((x) => x.scenario === c.name && x.round > 0 && x.contender === r.contender);
    const non2xx = all.reduce((n, x) => n + x.non2xx, 0);
    return {
      contender: r.contender,
      title: r.title,
      rounds: r.rounds,
      roundsUsed: r.roundsUsed,
      rps: r.rps,
      rpsRange: r.rpsRange,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      cpuPer1k: r.cpuPer1k,
      non2xx,
      socketErrors: r.errors - non2xx,
      maxForeignPct: r.maxForeignPct,
      rpsVsFlotilla: pairedRatio(runs, c.name, r.contender, FLOTILLA, 'rps'),
      cpuVsFlotilla: pairedRatio(runs, c.name, r.contender, FLOTILLA, 'cpuPer1k'),
      ...(r.primarySharePct === undefined ? {} : { primarySharePct: r.primarySharePct }),
      ...(r.busiestWorkerPct === undefined ? {} : { busiestWorkerPct: r.busiestWorkerPct }),
      ...(r.busiestConnectionsPct === undefined ? {} : { busiestConnectionsPct: r.busiestConnectionsPct }),
    };
  });
}

/**
 * Installs Watt if needed, starts the three contenders (pinned like the main run's clusters),
 * checks they answer alike, then runs a warm-up round and `rounds` alternating rounds of every
 * case; a run with more than `NOISY_PCT` % of other processes' CPU is measured again (twice at
 * most) once the machine is idle. Returns everything but `meta`.
 */
export async function runClusterCompare(s: CompareSettings): Promise<Omit<CompareResults, 'meta'>> {
  const names = COMPARE_CASES.map((c) => c.name);
  for (const name of s.only ?? []) {
    if (!names.includes(name)) throw new Error(`no case '${name}': ${names.join(', ')}`);
  }
  const cases = COMPARE_CASES.filter((c) => s.only === undefined || s.only.includes(c.name));
  const contenders = compareContenders(ensureWatt(s.log));
  const servers = new Map<string, ServerProcess>();
  for (const c of contenders) {
    const core = c.pinned && s.serverCore !== undefined ? { core: s.serverCore } : {};
    servers.set(c.name, await ServerProcess.start({ ...c, ...core }, await freePort(), { METRICS_PORT: String(await freePort()) }));
  }
  await sleep(500);
  const parity: Record<string, string[]> = {};
  const accepts: Record<string, string> = {};
  for (const [name, server] of servers) {
    parity[name] = await checkParity(server.port, false);
    if (parity[name].length > 0) s.log(`parity: ${name} differs: ${parity[name].join('; ')}`);
    accepts[name] = acceptors(server);
    s.log(`${name}: ${accepts[name]}`);
  }

  const runs: Run[] = [];
  for (let round = 0; round <= s.rounds; round++) {
    for (const c of cases) {
      for (const contender of turn(contenders, round)) {
        const settings: LoadSettings = {
          connections: c.connections,
          durationS: round === 0 ? s.warmupS : s.durationS,
          wrkCore: s.wrkCore,
          ...(contender.workerThreads === undefined ? {} : { workerThreads: contender.workerThreads }),
        };
        const measure = async (): Promise<Run> => ({
          contender: contender.name,
          round,
          ...(await loadRun(servers.get(contender.name)!, c, settings)),
        });
        let run = await measure();
        for (let retry = 0; round > 0 && retry < 2 && run.foreignPct > NOISY_PCT; retry++) {
          s.log(`${c.name} ${contender.name}: ${Math.round(run.foreignPct)} % noise`);
          if ((await waitQuiet(4)) >= NOISY_PCT / 100) break;
          const again = await measure();
          if (again.foreignPct < run.foreignPct) run = again;
        }
        runs.push(run);
        const split = run.split === undefined ? '' : `, primary ${Math.round((run.split.primary / Math.max(run.cpuS, 1e-9)) * 100)} %`;
        s.log(
          `${round === 0 ? 'warm-up' : `round ${round}/${s.rounds}`} ${c.name} ${contender.name}: ${Math.round(run.rps)} req/s, ` +
            `p99 ${run.p99Ms.toFixed(1)} ms, ${run.cpuPer1k.toFixed(4)} CPU s/1k${split}` +
            `${run.errors ? `, ${run.non2xx} non-2xx, ${run.errors - run.non2xx} socket errors` : ''}, noise ${Math.round(run.foreignPct)} %`,
        );
        await sleep(100);
      }
    }
  }
  for (const server of servers.values()) await server.stop();
  return {
    contenders: contenders.map((c) => ({ name: c.name, title: c.title, versions: c.versions, accepts: accepts[c.name] ?? '?' })),
    cases: [...cases],
    rows: Object.fromEntries(cases.map((c) => [c.name, rowsOf(runs, contenders, c)])),
    parity,
    runs,
  };
}
