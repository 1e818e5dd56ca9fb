import { now, sleep, until } from '../lib/clock.ts';
import { byMsg, Cluster } from '../lib/cluster.ts';
import { type Context, type ScenarioOutcome, steadyRate } from '../lib/context.ts';
import { Load } from '../lib/load.ts';
import { Probe } from '../lib/probe.ts';
import { info, judged } from '../lib/report.ts';
import { type Runtime, sourceRuntime } from '../lib/runtime.ts';
import { fmt, max, percentile } from '../lib/stats.ts';

const NAME = 'kill -9 worker';
const CONNECTIONS = 16;
const PROBE_EVERY_MS = 10;
const REPLACEMENT_TARGET_MS = 1_500;
/** Extra runs from the .ts sources (what `npm start` runs), for information, when the main runs are compiled. */
const SOURCE_RUNS = 3;

interface KillRun {
  /** Requests of the load and the probes. */
  requests: number;
  failed: number;
  /** Keep-alive connections of the load bound to the killed worker. */
  victimConnections: number;
  /** Failed requests on those connections: at most one each is in flight (pipelining 1). */
  failedOnVictimConnections: number;
  /** New connections (probes) that failed, sent before the primary noticed the exit: node:cluster may have handed them to the dead worker. */
  failedHandOffs: number;
  /** Failures that were not the killed worker's in-flight requests (anything else, and a second failure on one of its connections). */
  unexpected: Failure[];
  /** Non-2xx answers (from the surviving worker or the replacement). */
  survivorErrors: number;
  /** Kill → first 200 carrying the replacement's pid, on a probe. */
  replacementServesMs: number | undefined;
  /** Kill → the primary's `worker listening` line for the replacement (ms resolution). */
  replacementListeningMs: number | undefined;
  /** Kill → the primary's `worker exited unexpectedly` line. */
  noticedMs: number | undefined;
}

interface Failure {
  what: string;
  sentMs: number;
  boundPid: number | undefined;
  error: string;
}

/**
 * kill -9 one of two workers under steady keep-alive load (the recording
 * undici client, 16 connections, pipelining 1) while a probe opens a new
 * connection every 10 ms; `runs` times, each on a fresh cluster with the
 * framework's default supervision settings (a fresh cluster keeps the backoff
 * at its first step and the crash-loop counter at zero).
 */
export async function killWorker(ctx: Context): Promise<ScenarioOutcome> {
  const rate = steadyRate(ctx);
  const runs: KillRun[] = [];
  const notes: string[] = [];
  for (let r = 0; r < ctx.options.killRuns; r++) {
    const run = await oneRun(ctx.runtime, rate);
    runs.push(run);
    ctx.log(
      `kill run ${r + 1}/${ctx.options.killRuns}: replacement serves after ${fmt(run.replacementServesMs ?? Number.NaN)} ms, ` +
        `${run.failed} failed (${run.failedOnVictimConnections} on its ${run.victimConnections} connections, ${run.failedHandOffs} hand-offs, ` +
        `${run.unexpected.length} unexpected), ${run.survivorErrors} survivor errors`,
    );
    for (const f of run.unexpected.slice(0, 5)) {
      notes.push(
        `run ${r + 1}: unexpected failure (${f.what}) sent ${fmt(f.sentMs, 1)} ms after the kill on a connection bound to ${f.boundPid ?? 'no worker yet'}: ${f.error}`,
      );
    }
  }
  const serves = runs.map((r) => r.replacementServesMs ?? Number.POSITIVE_INFINITY);
  const listening = runs.map((r) => r.replacementListeningMs ?? Number.NaN);
  const noticed = runs.map((r) => r.noticedMs ?? Number.NaN);
  const sum = (f: (r: KillRun) => number) => runs.reduce((s, r) => s + f(r), 0);
  const unexpected = sum((r) => r.unexpected.length);
  const survivorErrors = sum((r) => r.survivorErrors);
  const p95 = percentile(serves, 95);
  const rows = [
    info(
      NAME,
      'runs × steady load',
      `${runs.length} × ${rate} req/s over ${CONNECTIONS} keep-alive connections + a new-connection probe every ${PROBE_EVERY_MS} ms`,
    ),
    info(NAME, 'requests sent (all runs)', String(sum((r) => r.requests))),
    info(NAME, 'failed requests (all runs)', `${sum((r) => r.failed)} (per run: ${runs.map((r) => r.failed).join(', ')})`),
    info(
      NAME,
      "per run: failed on the killed worker's connections / its connections, + new connections handed to it",
      runs.map((r) => `${r.failedOnVictimConnections}/${r.victimConnections}+${r.failedHandOffs}`).join(', '),
    ),
    judged(NAME, "failed requests other than the killed worker's in-flight ones", String(unexpected), '0', unexpected === 0),
    judged(NAME, 'errors answered by the surviving worker', String(survivorErrors), '0', survivorErrors === 0),
    judged(
      NAME,
      `kill → replacement serves, p95 over ${runs.length} runs`,
      `${fmt(p95)} ms (median ${fmt(percentile(serves, 50))}, max ${fmt(max(serves))})`,
      `<= ${REPLACEMENT_TARGET_MS} ms`,
      p95 <= REPLACEMENT_TARGET_MS,
    ),
    info(NAME, 'kill → replacement listening (primary log), median / max', `${fmt(percentile(listening, 50))} / ${fmt(max(listening))} ms`),
    info(NAME, 'kill → exit noticed by the primary (log), median / max', `${fmt(percentile(noticed, 50))} / ${fmt(max(noticed))} ms`),
  ];
  if (ctx.runtime.kind === 'compiled') {
    const fromSource: number[] = [];
    for (let r = 0; r < SOURCE_RUNS; r++) {
      const run = await oneRun(sourceRuntime(), rate);
      ctx.log(`kill run from source ${r + 1}/${SOURCE_RUNS}: replacement serves after ${fmt(run.replacementServesMs ?? Number.NaN)} ms`);
      fromSource.push(run.replacementServesMs ?? Number.POSITIVE_INFINITY);
    }
    rows.push(
      info(
        NAME,
        `kill → replacement serves, cluster run from the .ts sources (npm start), ${SOURCE_RUNS} runs`,
        `${fromSource.map((ms) => fmt(ms)).join(', ')} ms`,
      ),
    );
  }
  return { rows, notes };
}

async function oneRun(runtime: Runtime, rate: number): Promise<KillRun> {
  const cluster = new Cluster({ runtime });
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const victim = cluster.workers.get(0) as number;
    const survivor = cluster.workers.get(1) as number;
    const load = new Load({
      port,
      connections: CONNECTIONS,
      rate,
      request: () => ({ path: '/who', planned: false }),
      timeoutMs: 2_000,
    }).start();
    const probe = new Probe(port, '/who', PROBE_EVERY_MS, 2_000);
    // the load settles, and both workers hold some of its keep-alive connections
    await sleep(1_500);
    const victimConnections = new Set(load.outcomes.filter((o) => o.pid === victim).map((o) => o.conn));
    if (victimConnections.size === 0) throw new Error(`none of the ${CONNECTIONS} connections reached worker ${victim}`);

    const killedAt = now();
    process.kill(victim, 'SIGKILL');
    const isNew = (pid: number | undefined) => pid !== undefined && pid !== victim && pid !== survivor;
    const served = await until(() => probe.results.find((p) => p.status === 200 && isNew(p.pid))?.endAt, 15_000);
    await sleep(1_000);
    await load.stop();
    const probes = await probe.stop();

    const exitLine = cluster.lines.find(byMsg('worker exited unexpectedly: replacing it', { workerPid: victim }));
    const upLine = cluster.lines.find((l) => l.msg === 'worker listening' && l.at >= killedAt - 1 && l['workerPid'] !== victim);
    const noticedAt = exitLine?.at ?? Number.POSITIVE_INFINITY;
    const failedLoad = load.outcomes.filter((o) => o.status !== 200);
    const failedProbes = probes.filter((p) => p.status !== 200);

    const unexpected: Failure[] = [];
    let survivorErrors = 0;
    const failuresPerVictimConnection = new Map<number, number>();
    let failedHandOffs = 0;
    for (const o of failedLoad) {
      const failure = { what: 'load', sentMs: o.sentAt - killedAt, boundPid: o.boundPid, error: o.error ?? `status ${o.status}` };
      if (o.status !== 0) {
        // an answer that is not a 200: only live workers answer
        survivorErrors++;
        unexpected.push(failure);
      } else if (o.boundPid === victim) {
        const count = (failuresPerVictimConnection.get(o.conn) ?? 0) + 1;
        failuresPerVictimConnection.set(o.conn, count);
        // pipelining 1: one request in flight per connection; a second failure on it was not in flight at the kill
        if (count > 1) unexpected.push({ ...failure, what: 'second failure on one of its connections' });
      } else if (o.boundPid === undefined && o.sentAt <= noticedAt) {
        failedHandOffs++;
      } else {
        unexpected.push(failure);
      }
    }
    for (const p of failedProbes) {
      if (p.status !== 0) {
        survivorErrors++;
        unexpected.push({ what: 'probe', sentMs: p.sentAt - killedAt, boundPid: undefined, error: `status ${p.status}` });
      } else if (p.sentAt <= noticedAt) {
        failedHandOffs++;
      } else {
        unexpected.push({ what: 'probe', sentMs: p.sentAt - killedAt, boundPid: undefined, error: p.error ?? 'no answer' });
      }
    }

    await cluster.stop();
    return {
      requests: load.outcomes.length + probes.length,
      failed: failedLoad.length + failedProbes.length,
      victimConnections: victimConnections.size,
      failedOnVictimConnections: [...failuresPerVictimConnection.values()].reduce((s, n) => s + n, 0),
      failedHandOffs,
      unexpected,
      survivorErrors,
      replacementServesMs: served === undefined ? undefined : served - killedAt,
      replacementListeningMs: upLine === undefined ? undefined : upLine.at - killedAt,
      noticedMs: exitLine === undefined ? undefined : exitLine.at - killedAt,
    };
  } finally {
    cluster.dispose();
  }
}
