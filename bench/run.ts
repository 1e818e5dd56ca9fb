/**
 * `npm run bench [-- --quick]`: the benchmark suite. Starts every contender
 * (each its own process, pinned to core 0 when there are 2+ cores), checks
 * they answer alike, runs a warm-up round then alternating rounds of wrk
 * (pinned to core 1), keep-alive and with a new connection per request,
 * measures start, memory, scrape and shutdown, and writes
 * bench/results/<name>.md + .json. With `--baseline REV`, flotilla contenders
 * also run from REV's src/, for current ÷ base ratios. See bench/README.md.
 */
import { availableParallelism } from 'node:os';
import { buildBaseline, buildCompiled, resolveRevision } from './lib/build.ts';
import { CLUSTER_COMPARE_NOTES, runClusterCompare } from './lib/cluster-compare.ts';
import { writeClusterCompareReport } from './lib/cluster-compare-report.ts';
import { CONTENDERS, type Contender, roundOrder, runsIn, SCENARIOS } from './lib/contenders.ts';
import { FOOTPRINT_NOISY_PCT, runFootprint, SETTLE_MS, WARMUP_REQUESTS } from './lib/footprint.ts';
import { writeFootprintReport } from './lib/footprint-report.ts';
import { loadRun, type Run } from './lib/load.ts';
import { machineMeta } from './lib/meta.ts';
import { scrapeWithStuckWorker, snapshotCost } from './lib/metrics-cost.ts';
import { parseOptions } from './lib/options.ts';
import { checkParity } from './lib/parity.ts';
import { waitQuiet } from './lib/proc.ts';
import { profileContender } from './lib/profile.ts';
import { metricsCostLines, type Results, serializerCostLines, writeReport } from './lib/report.ts';
import { SCRAPE_CLUSTER, SCRAPE_STANDALONE, scrapeLatency } from './lib/scrape.ts';
import { serializerCost } from './lib/serializer-cost.ts';
import { freePort, ROOT, runtime, ServerProcess } from './lib/server-process.ts';
import { CLUSTER, coldStarts, exitWithIdleConnections, rssOf, STANDALONE } from './lib/startup.ts';
import { baselinePairs, clusterFigures, type Extras, NOISY_PCT, pairedRatio, type Row, summarize, targets } from './lib/summary.ts';
import { ensureWrk } from './lib/wrk.ts';

const opts = parseOptions(process.argv.slice(2));
const wrk = ensureWrk();
const pin = availableParallelism() >= 2;
const [serverCore, wrkCore] = pin ? [0, 1] : [undefined, undefined];
const t0 = performance.now();
const log = (line: string) => process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// (the cluster comparison names its own cases)
for (const name of opts.clusterCompare ? [] : (opts.scenarios ?? [])) {
  if (!SCENARIOS.some((s) => s.name === name)) throw new Error(`no scenario '${name}': ${SCENARIOS.map((s) => s.name).join(', ')}`);
}
const scenarios = SCENARIOS.filter((s) => opts.scenarios === undefined || opts.scenarios.includes(s.name));
const fromSource = { root: ROOT, source: true };
if (opts.baseline !== undefined && opts.source) throw new Error('--baseline runs both sides compiled: leave out --source');
if (!opts.source) Object.assign(runtime, { root: buildCompiled(), source: false });
// resolved first: an unknown revision fails before anything is built
const baseline = opts.baseline === undefined ? undefined : { rev: opts.baseline, ...resolveRevision(opts.baseline) };

if (opts.profile !== undefined) {
  const contender = CONTENDERS.find((c) => c.name === opts.profile);
  if (contender === undefined) throw new Error(`no contender '${opts.profile}': ${CONTENDERS.map((c) => c.name).join(', ')}`);
  for (const s of scenarios) log(`\n${await profileContender(contender, s, Math.max(opts.durationS, 10), opts.connections, pin)}\n`);
  process.exit(0);
}

if (opts.footprint) {
  const busy = await waitQuiet(30, 0.1, (b) => log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`));
  if (busy >= 0.1) log(`the machine is still ${Math.round(busy * 100)} % busy: expect noisy numbers`);
  log(`footprint: flotilla cluster and Fastify in node:cluster, ${opts.rounds} rounds`);
  const measured = await runFootprint({ rounds: opts.rounds, strace: opts.footprintStrace, log });
  const { wrk: _, ...machine } = machineMeta('');
  const meta = {
    ...machine,
    rounds: opts.rounds,
    servers: opts.source ? 'servers from the .ts sources' : 'servers compiled to JavaScript',
    warmupRequests: WARMUP_REQUESTS,
    settleMs: SETTLE_MS,
    busyAtStartPct: Math.round(busy * 100),
    notes: [
      'Idle CPU: utime + stime from /proc/<pid>/stat of every process of the tree (the started process and its descendants), in % of one core over the window; per thread from /proc/<pid>/task/<tid>/stat, grouped by thread name (comm).',
      'Wake-ups: the deltas of voluntary_ctxt_switches + nonvoluntary_ctxt_switches from /proc/<pid>/task/<tid>/status over the window, per second: each switch is the thread leaving the CPU, so about one per wake-up (a proxy, not a count of timer expiries).',
      "Threads: `WorkerThread` is a worker_threads Worker: in flotilla's primary the service thread (the service's schedulers), in its workers the watchdog thread; `V8Worker` are V8's platform threads, `libuv-worker` the libuv thread pool.",
      "PSS: Pss from /proc/<pid>/smaps_rollup, each shared page divided among the processes mapping it (other node processes on the machine share the node binary's pages, so PSS moves a little with what else runs); private MB is Private_Clean + Private_Dirty. Threads share their process's memory: no PSS per thread.",
      'Cold start: spawn → the first 200 on GET /items/1, asked on a fresh connection every 5 ms; NODE_COMPILE_CACHE is, for both contenders, a directory filled by a priming start of the same contender (warm) or a new empty directory (cold). Ratios flotilla ÷ Fastify are taken round by round, then their median.',
      `noise %: CPU time of every other process (and steal) during the window, in % of one core; when at least 3 rounds stay below ${FOOTPRINT_NOISY_PCT} %, the noisier ones are left out of the medians.`,
    ],
  };
  process.stdout.write(`\n${writeFootprintReport(`${ROOT}bench/results`, opts.out, { meta, ...measured })}\n`);
  process.exit(0);
}

if (opts.clusterCompare) {
  const busy = await waitQuiet(30, 0.1, (b) => log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`));
  if (busy >= 0.1) log(`the machine is still ${Math.round(busy * 100)} % busy: expect noisy numbers`);
  log(`cluster comparison: flotilla, Fastify in node:cluster and Watt, ${opts.rounds} rounds of ${opts.durationS} s`);
  const measured = await runClusterCompare({
    rounds: opts.rounds,
    durationS: opts.durationS,
    warmupS: opts.warmupS,
    ...(opts.scenarios === undefined ? {} : { only: opts.scenarios }),
    serverCore,
    wrkCore,
    log,
  });
  const meta = {
    ...machineMeta(wrk),
    rounds: opts.rounds,
    durationS: opts.durationS,
    warmupS: opts.warmupS,
    servers: opts.source ? 'servers from the .ts sources' : 'servers compiled to JavaScript',
    pinning: pin ? 'every process and thread of each contender on core 0, wrk on core 1' : 'none (fewer than 2 cores)',
    busyAtStartPct: Math.round(busy * 100),
    notes: CLUSTER_COMPARE_NOTES,
  };
  process.stdout.write(`\n${writeClusterCompareReport(`${ROOT}bench/results`, opts.out, { meta, ...measured })}\n`);
  process.exit(0);
}

/** The metrics-cost measurements: the primary's scrape with a worker stuck, and one push's CPU in a worker. */
const metricsCost = async (): Promise<NonNullable<Extras['metricsCost']>> => {
  log(`metrics cost: ${opts.stuckScrapes} scrapes healthy, then with a worker stuck; ${opts.snapshotIterations} snapshots in-process`);
  return { scrape: await scrapeWithStuckWorker(opts.stuckScrapes), snapshot: await snapshotCost(opts.snapshotIterations) };
};

if (opts.metricsOnly) {
  const before = await waitQuiet(30, 0.1, (b) => log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`));
  if (before >= 0.1) log(`the machine is still ${Math.round(before * 100)} % busy: expect noisy numbers`);
  process.stdout.write(`\n${metricsCostLines(await metricsCost()).join('\n')}\n`);
  process.exit(0);
}

if (opts.serializerOnly) {
  log(`serializer comparison: ${opts.serializerRounds} rounds in-process`);
  process.stdout.write(`\n${serializerCostLines(await serializerCost(opts.serializerRounds, opts.serializerCalls)).join('\n')}\n`);
  process.exit(0);
}

if (baseline !== undefined) log(`baseline: compiling src/ as of ${baseline.rev} (${baseline.short} ${baseline.subject})`);
const baseRuntime = baseline === undefined ? undefined : { root: buildBaseline(baseline.commit), source: false };
// `--only` names the contenders, a full-mode-only one too; otherwise quick mode leaves those out
const current = CONTENDERS.filter((c) => opts.only?.includes(c.name) ?? (opts.mode === 'full' || !c.fullOnly));
// `--baseline`: flotilla full and lean (with `--only`, every flotilla contender named) built from the base revision too
const withBase = current.filter((c) =>
  opts.only === undefined ? ['flotilla-full', 'flotilla-lean'].includes(c.name) : c.name.startsWith('flotilla'),
);
const contenders: Contender[] = [
  ...current,
  ...(baseRuntime === undefined || baseline === undefined
    ? []
    : withBase.map((c) => ({
        ...c,
        name: `${c.name}@base`,
        title: `${c.title} @ base ${baseline.short}`,
        baseOf: c.name,
        runtime: baseRuntime,
      }))),
];
const busy = await waitQuiet(opts.mode === 'full' ? 120 : 10, 0.1, (b) =>
  log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`),
);
if (busy >= 0.1) log(`the machine is still ${Math.round(busy * 100)} % busy: expect noisy numbers`);
log(
  `flotilla bench, ${opts.mode}: ${contenders.length} contenders × ${scenarios.length} scenarios, ${opts.rounds} rounds of ${opts.durationS} s`,
);

// Every contender runs from the start, idle while another one is measured.
const servers = new Map<string, ServerProcess>();
for (const c of contenders) {
  const env = { METRICS_PORT: String(await freePort()), WORKERS: '2' };
  servers.set(
    c.name,
    await ServerProcess.start({ ...c, ...(c.pinned && serverCore !== undefined ? { core: serverCore } : {}) }, await freePort(), env),
  );
}
await sleep(500);
const extras: Extras = { rss: { idle: {}, afterLoad: {} } };
const parity: Record<string, string[]> = {};
for (const [name, server] of servers) {
  extras.rss!.idle[name] = rssOf(server);
  parity[name] = await checkParity(server.port, name === 'floor');
  if (parity[name].length > 0) log(`parity: ${name} differs: ${parity[name].join('; ')}`);
}

const runs: Run[] = [];
for (let round = 0; round <= opts.rounds; round++) {
  for (const s of scenarios) {
    const inScenario = contenders.filter((c) => runsIn(c, s));
    for (const c of roundOrder(inScenario, round)) {
      const settings = {
        connections: opts.connections,
        durationS: round === 0 ? opts.warmupS : opts.durationS,
        wrkCore,
      };
      const measure = async (): Promise<Run> => ({ contender: c.name, round, ...(await loadRun(servers.get(c.name)!, s, settings)) });
      let run = await measure();
      // other processes were busy: once the machine is idle again, measure again (twice at most) and keep the quietest run
      for (let retry = 0; round > 0 && retry < 2 && run.foreignPct > NOISY_PCT; retry++) {
        log(`${s.name} ${c.name}: ${Math.round(run.foreignPct)} % noise`);
        if ((await waitQuiet(opts.mode === 'full' ? 20 : 4)) >= NOISY_PCT / 100) break;
        const again = await measure();
        if (again.foreignPct < run.foreignPct) run = again;
      }
      runs.push(run);
      const noise = `, noise ${Math.round(run.foreignPct)} %`;
      const split =
        run.split === undefined
          ? ''
          : `, primary ${Math.round((run.split.primary / Math.max(run.cpuS, 1e-9)) * 100)} %, workers ${run.split.workers.map((w) => w.toFixed(2)).join(' / ')} CPU s${run.split.connections === undefined ? '' : `, ${run.split.connections.join(' / ')} connections`}`;
      log(
        `${round === 0 ? 'warm-up' : `round ${round}/${opts.rounds}`} ${s.name} ${c.name}: ${Math.round(run.rps)} req/s, ` +
          `p99 ${run.p99Ms.toFixed(1)} ms, ${run.cpuPer1k.toFixed(4)} CPU s/1k${split}${run.errors ? `, ${run.errors} ERRORS` : ''}${noise}`,
      );
      await sleep(100);
    }
  }
}
await sleep(500);
for (const [name, server] of servers) extras.rss!.afterLoad[name] = rssOf(server);
for (const server of servers.values()) await server.stop();

if (opts.extras) {
  log('cold start, scrape and exit measurements');
  extras.coldStart = { cluster: await coldStarts(CLUSTER, opts.coldStarts), standalone: await coldStarts(STANDALONE, opts.coldStarts) };
  if (opts.mode === 'full' && !opts.source) extras.coldStart.clusterFromSource = await coldStarts({ ...CLUSTER, runtime: fromSource }, 3);
  extras.scrape = { cluster: await scrapeLatency(SCRAPE_CLUSTER, opts.scrapes) };
  if (opts.mode === 'full') extras.scrape.standalone = await scrapeLatency(SCRAPE_STANDALONE, opts.scrapes);
  extras.metricsCost = await metricsCost();
  log('serializer comparison (in-process)');
  extras.serializer = await serializerCost(opts.serializerRounds, opts.serializerCalls);
  extras.exit = { standalone: await exitWithIdleConnections(STANDALONE), cluster: await exitWithIdleConnections(CLUSTER) };
}

log('done');
const rows: Record<string, Row[]> = Object.fromEntries(scenarios.map((s) => [s.name, summarize(runs, contenders, s)]));
const tracing: Results['tracing'] = {};
for (const s of scenarios) {
  const ratio = (metric: 'rps' | 'cpuPer1k') => pairedRatio(runs, s.name, 'flotilla-full', 'flotilla-no-tracing', metric);
  if (contenders.some((c) => c.name === 'flotilla-no-tracing')) tracing[s.name] = { rpsRatio: ratio('rps'), cpuRatio: ratio('cpuPer1k') };
}
/** With and without response schemas, and flotilla against Fastify with the same schemas. */
const SCHEMA_PAIRS = [
  ['flotilla-full', 'flotilla-no-schema'],
  ['fastify-schema', 'fastify'],
  ['flotilla-full', 'fastify-schema'],
] as const;
const ran = new Set(contenders.map((c) => c.name));
const responseSchemas: NonNullable<Results['responseSchemas']> = {};
for (const s of scenarios) {
  responseSchemas[s.name] = SCHEMA_PAIRS.filter(([a, b]) => ran.has(a) && ran.has(b)).map(([a, b]) => ({
    a,
    b,
    rpsRatio: pairedRatio(runs, s.name, a, b, 'rps'),
    cpuRatio: pairedRatio(runs, s.name, a, b, 'cpuPer1k'),
  }));
}
const results: Results = {
  meta: {
    mode: opts.mode,
    ...machineMeta(wrk),
    connections: opts.connections,
    durationS: opts.durationS,
    ...(baseline === undefined ? {} : { baseline: { rev: baseline.rev, commit: baseline.short, subject: baseline.subject } }),
    warmupS: opts.warmupS,
    rounds: opts.rounds,
    busyAtStartPct: Math.round(busy * 100),
    pinning: pin
      ? 'standalone servers on core 0, wrk on core 1; cluster (primary + workers) on core 0; unpinned cluster on any core'
      : 'none (fewer than 2 cores)',
    notes: [
      'CPU s / 1k req: utime + stime from /proc/<pid>/stat of every server process (cluster: primary + workers), per 1 000 completed requests.',
      "Cluster CPU split: the same counters per process; the primary's share is its CPU ÷ the cluster's, the busiest worker's share its CPU ÷ the workers' (50 % with 2 workers is an even spread).",
      'A new connection per request: wrk sends `Connection: close`, the server closes each connection after its reply and wrk opens another; the kernel reuses the loopback TIME_WAIT sockets (net.ipv4.tcp_tw_reuse), no connect errors at 50 connections.',
      `noise %: CPU time of every other process (and steal) on the machine during a run, in % of one core; a run above ${NOISY_PCT} % is measured again once the machine is idle, and left out of the medians when 3 quieter rounds exist (rounds column: used/measured); the column shows the highest noise among the rounds used.`,
      'The no-op tracer row replaces the App tracer with app.setTracer(noopTracer): the App has no switch to turn tracing off.',
    ],
  },
  parity,
  scenarios,
  rows,
  runs,
  extras,
  tracing,
  responseSchemas,
  clusters: clusterFigures(runs, rows),
  ...(baseline === undefined
    ? {}
    : { baseline: { rev: baseline.rev, commit: baseline.short, pairs: baselinePairs(runs, contenders, scenarios) } }),
  targets: targets(runs, rows, scenarios, extras),
};
process.stdout.write(`\n${writeReport(`${ROOT}bench/results`, opts.out, results)}\n`);
