import { get } from 'node:http';
import { formatDuration, now, sleep, within } from '../lib/clock.ts';
import { Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { listeningPorts, rssMb, whenGone } from '../lib/proc.ts';
import { info, judged } from '../lib/report.ts';
import { fmt, slope } from '../lib/stats.ts';
import { runWrk } from '../lib/wrk.ts';

const NAME = 'soak';
const LOAD_SHARE = 0.7;
const FAIL_EVERY = 100;
const CONNECTIONS = 64;
const CALIBRATION_ROUNDS = 4;
const MB = 1024 * 1024;
const SLOPE_TARGET_MB_PER_MIN = 1;
/** Below this soak length the RSS slope is reported, not judged: heap sizing and GC cycles dominate a short window. */
const SLOPE_JUDGED_FROM_MS = 10 * 60_000;

/**
 * A 2-worker cluster under wrk at ~70 % of the measured capacity for
 * `--soak` (30 s by default, e.g. 30m for the real thing), 1 request in 100
 * throwing a plain Error in its handler (a planned 500). Checks: no 5xx but
 * the planned ones, no request without an answer, no worker restarted, the
 * RSS slope after the warm-up (the first third, at most 5 min), and nothing
 * left after the shutdown: processes, listening ports.
 */
export async function soak(ctx: Context): Promise<ScenarioOutcome> {
  const soakMs = ctx.options.soakMs;
  const warmupMs = Math.min(5 * 60_000, soakMs / 3);
  const sampleMs = soakMs <= 2 * 60_000 ? 1_000 : 5_000;
  const cluster = new Cluster({ runtime: ctx.runtime });
  const notes: string[] = [];
  try {
    await cluster.ready();
    const port = cluster.appPort;
    let capacity = ctx.capacityRps;
    if (capacity === undefined) {
      capacity = (await runWrk({ port, path: '/work', connections: 32, durationS: 5 })).rps;
      ctx.log(`capacity (measured here, the capacity scenario did not run): ${fmt(capacity)} req/s`);
    }
    const target = capacity * LOAD_SHARE;

    // wrk has no rate option: pace each connection with a pause between its requests, calibrated in short runs
    // (each corrects the pause by part of the gap between the interval wanted and the one observed)
    const interval = (CONNECTIONS * 1000) / target;
    let delayMs = Math.max(0, interval - 1);
    for (let round = 0; round < CALIBRATION_ROUNDS; round++) {
      const r = await runWrk({ port, path: '/work', connections: CONNECTIONS, durationS: 3, delayMs, failEvery: FAIL_EVERY });
      ctx.log(`soak calibration ${round + 1}: ${fmt(r.rps)} req/s with a ${fmt(delayMs, 2)} ms pause, ${fmt(target)} wanted`);
      if (Math.abs(r.rps / target - 1) <= 0.05) break;
      delayMs = Math.max(0, delayMs + 0.7 * (interval - (CONNECTIONS * 1000) / r.rps));
    }

    const failedBefore = cluster.lines.filter((l) => l.msg === 'request failed').length;
    const samples: { t: number; rss: Map<number, number> }[] = [];
    const started = now();
    const sample = () => {
      const pids = [cluster.pid, ...currentWorkers(cluster)];
      const rss = new Map<number, number>();
      for (const pid of pids) {
        const mb = rssMb(pid);
        if (mb !== undefined) rss.set(pid, mb);
      }
      samples.push({ t: now() - started, rss });
    };
    sample();
    const sampler = setInterval(sample, sampleMs);
    // the workers' V8 heap (summed by the primary's /metrics): tells heap sizing (total) from live objects (used)
    const heap: { t: number; used: number; total: number; external: number }[] = [];
    const heapSampler = setInterval(() => {
      fetchText(cluster.metricsPort, '/metrics').then(
        (text) =>
          heap.push({
            t: now() - started,
            used: sumSeries(text, 'nodejs_heap_size_used_bytes') / MB,
            total: sumSeries(text, 'nodejs_heap_size_total_bytes') / MB,
            external: sumSeries(text, 'nodejs_external_memory_bytes') / MB,
          }),
        () => {},
      );
    }, sampleMs);
    ctx.log(`soak: ${formatDuration(soakMs)} at ~${fmt(target)} req/s, 1 request in ${FAIL_EVERY} failing on purpose`);
    const run = await runWrk({
      port,
      path: '/work',
      connections: CONNECTIONS,
      durationS: Math.round(soakMs / 1000),
      delayMs,
      failEvery: FAIL_EVERY,
    });
    clearInterval(sampler);
    clearInterval(heapSampler);
    sample();

    const metrics = await fetchText(cluster.metricsPort, '/metrics');
    const restarts = sumSeries(metrics, 'flotilla_worker_restarts_total');
    const serverErrors = cluster.lines.filter((l) => l.msg === 'request failed').length - failedBefore;

    // shut down; then nothing may be left
    const pids = cluster.pids();
    const signalledAt = now();
    cluster.signal('SIGTERM');
    const exit = await within(cluster.exited, 15_000);
    const goneAt = await whenGone(pids, 5_000);
    await sleep(100);
    const alive = goneAt === undefined ? pids.filter((pid) => rssMb(pid) !== undefined) : [];
    const ports = [port, cluster.metricsPort].filter((p) => listeningPorts().has(p));

    // RSS slope after the warm-up, per process and for the whole tree
    const after = samples.filter((s) => s.t >= warmupMs);
    const trackedPids = [...new Set(after.flatMap((s) => [...s.rss.keys()]))];
    const perPid = trackedPids.map((pid) => ({
      pid,
      role: pid === cluster.pid ? 'primary' : 'worker',
      slope: slope(after.flatMap((s) => (s.rss.has(pid) ? [{ x: s.t / 60_000, y: s.rss.get(pid) as number }] : []))),
    }));
    const heapAfter = heap.filter((h) => h.t >= warmupMs);
    const heapUsedSlope = slope(heapAfter.map((h) => ({ x: h.t / 60_000, y: h.used })));
    const heapTotalSlope = slope(heapAfter.map((h) => ({ x: h.t / 60_000, y: h.total })));
    const externalSlope = slope(heapAfter.map((h) => ({ x: h.t / 60_000, y: h.external })));
    const treeSlope = (points: typeof samples) =>
      slope(points.map((s) => ({ x: s.t / 60_000, y: [...s.rss.values()].reduce((a, b) => a + b, 0) })));
    const total = treeSlope(after);
    // a leak grows steadily; heap sizing and allocator arenas grow less and less: compare the two halves of the window
    const middle = warmupMs + (soakMs - warmupMs) / 2;
    const halves = [treeSlope(after.filter((s) => s.t < middle)), treeSlope(after.filter((s) => s.t >= middle))];
    const first = samples[0];
    const last = samples.at(-1);
    const sumRss = (s: typeof first) => (s === undefined ? Number.NaN : [...s.rss.values()].reduce((a, b) => a + b, 0));
    const errors = run.socketErrors;
    const noAnswer = errors.connect + errors.read + errors.write + errors.timeout;
    // the last requests may still be in flight when wrk stops: a planned failure or two unanswered is normal
    if (run.planned - run.planned500 > 2)
      notes.push(`${run.planned} planned failures sent, ${run.planned500} answered by the planned 500 problem`);
    if (restarts > 0) notes.push(`workers restarted during the soak: ${restarts}${cluster.tail(10)}`);
    if (exit?.code !== 0 || alive.length > 0 || ports.length > 0)
      notes.push(
        `after the shutdown: exit ${JSON.stringify(exit)}, alive ${alive.join(', ') || 'none'}, listening ${ports.join(', ') || 'none'}`,
      );
    const slopeJudged = soakMs >= SLOPE_JUDGED_FROM_MS;
    if (!slopeJudged)
      notes.push(
        `a ${formatDuration(soakMs)} soak measures the RSS slope over ${formatDuration(soakMs - warmupMs)}, where heap sizing and GC cycles ` +
          `dominate it: reported, not judged; the leak check is \`--soak 30m\` (judged from ${formatDuration(SLOPE_JUDGED_FROM_MS)}).`,
      );
    const slopeFigure = 'RSS slope after warm-up, whole tree';
    const slopeValue = `${fmt(total, 2)} MB/min (${fmt(sumRss(first))} → ${fmt(sumRss(last))} MB over the run, ${after.length} samples)`;

    return {
      rows: [
        info(
          NAME,
          'load',
          `${formatDuration(soakMs)} (warm-up ${formatDuration(warmupMs)}), wrk ${CONNECTIONS} connections: ${fmt(run.rps)} req/s = ${fmt(
            (run.rps / capacity) * 100,
          )} % of capacity; p50 ${fmt(run.latencyMs.p50, 2)} ms, p99 ${fmt(run.latencyMs.p99, 2)} ms`,
        ),
        info(
          NAME,
          'requests / planned failures answered 500',
          `${run.requests} / ${run.planned500} of ${run.planned} (server logged ${serverErrors})`,
        ),
        judged(NAME, 'unexpected 5xx', String(run.unexpected5xx), '0', run.unexpected5xx === 0),
        judged(
          NAME,
          'requests without an answer / other non-200',
          `${noAnswer} (connect ${errors.connect}, read ${errors.read}, write ${errors.write}, timeout ${errors.timeout}) / ${run.other}`,
          '0 / 0',
          noAnswer === 0 && run.other === 0,
        ),
        judged(NAME, 'workers restarted', String(restarts), '0', restarts === 0),
        slopeJudged
          ? judged(NAME, slopeFigure, slopeValue, `< ${SLOPE_TARGET_MB_PER_MIN} MB/min`, total < SLOPE_TARGET_MB_PER_MIN)
          : info(NAME, `${slopeFigure} (short soak: indicative)`, slopeValue),
        info(NAME, 'RSS slope after warm-up, per process', perPid.map((p) => `${p.role} ${fmt(p.slope, 2)}`).join(', ') + ' MB/min'),
        info(
          NAME,
          'RSS slope of the whole tree, first / second half after warm-up',
          `${fmt(halves[0] ?? Number.NaN, 2)} / ${fmt(halves[1] ?? Number.NaN, 2)} MB/min`,
        ),
        info(
          NAME,
          "workers' V8 heap after warm-up: used / total / external, slope (start → end)",
          `${fmt(heapUsedSlope, 2)} MB/min (${fmt(heapAfter[0]?.used ?? Number.NaN)} → ${fmt(heapAfter.at(-1)?.used ?? Number.NaN)} MB) / ` +
            `${fmt(heapTotalSlope, 2)} MB/min (${fmt(heapAfter[0]?.total ?? Number.NaN)} → ${fmt(heapAfter.at(-1)?.total ?? Number.NaN)} MB) / ` +
            `${fmt(externalSlope, 2)} MB/min (${fmt(heapAfter[0]?.external ?? Number.NaN)} → ${fmt(heapAfter.at(-1)?.external ?? Number.NaN)} MB)`,
        ),
        judged(
          NAME,
          'after the shutdown: exit code / processes left / listening ports',
          `${exit?.code ?? 'none'} / ${alive.length === 0 ? 'none' : alive.join(', ')} / ${ports.length === 0 ? 'none' : ports.join(', ')} (exited ${fmt(
            (exit?.at ?? Number.NaN) - signalledAt,
          )} ms after SIGTERM)`,
          '0 / none / none',
          exit?.code === 0 && alive.length === 0 && ports.length === 0,
        ),
      ],
      notes,
    };
  } finally {
    cluster.dispose();
  }
}

/** The pid of the worker in each slot, the latest one listening. */
function currentWorkers(cluster: Cluster): number[] {
  const bySlot = new Map<number, number>();
  for (const line of cluster.lines) if (line.msg === 'worker listening') bySlot.set(line['slot'] as number, line['workerPid'] as number);
  return [...bySlot.values()];
}

function fetchText(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false, signal: AbortSignal.timeout(5_000) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve(body));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** The sum of every sample of a metric (all label sets) in a Prometheus text exposition. */
function sumSeries(exposition: string, metric: string): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (line.startsWith(`${metric} `) || line.startsWith(`${metric}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
