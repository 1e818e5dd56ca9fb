import { now, sleep, until } from '../lib/clock.ts';
import { byMsg, Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { Load } from '../lib/load.ts';
import { Probe, type ProbeResult, probeOnce } from '../lib/probe.ts';
import { rssMb } from '../lib/proc.ts';
import { info, judged } from '../lib/report.ts';
import { fmt, max, percentile } from '../lib/stats.ts';

const NAME = 'memory recycling';
const MAX_MEMORY_MB = 250;
const LEAK_MB = 40;
const LEAK_EVERY_MS = 1_000;
const LOAD_MS = 25_000;
const CONNECTIONS = 16;
const RATE = 1_000;
const PROBE_EVERY_MS = 20;
const RSS_POLL_MS = 50;
const RECYCLE_MSG = 'recycling a worker: its replacement listens first';

interface Recycle {
  slot: number;
  pid: number;
  decidedAt: number;
  /** First RSS sample of ours above the limit (MiB: the primary compares RSS with maxMemoryMB × 1 MiB). */
  crossedAt: number | undefined;
  listeningAt: number | undefined;
  retiredAt: number | undefined;
  shutdownDone: boolean;
}

/**
 * `cluster.maxMemoryMB: 250` and a route that retains 40 MB per call, called
 * once a second on a new connection (so the workers take turns), under
 * steady cheap load (`GET /who`: the recording client on 16 keep-alive
 * connections, and a new-connection probe every 20 ms) for 25 s: recycles,
 * what the cheap requests lost, and the time from the limit being crossed
 * (our own RSS samples of each worker every 50 ms) to the decision and to
 * the replacement listening (the primary's log).
 */
export async function memoryRecycling(ctx: Context): Promise<ScenarioOutcome> {
  const cluster = new Cluster({ runtime: ctx.runtime, config: { cluster: { maxMemoryMB: MAX_MEMORY_MB }, logging: { requests: false } } });
  const notes: string[] = [];
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const load = new Load({ port, connections: CONNECTIONS, rate: RATE, request: () => ({ path: '/who', planned: false }) }).start();
    const probe = new Probe(port, '/who', PROBE_EVERY_MS, 5_000);

    // every worker's RSS, ours to sample: when did each first go above the limit
    const crossed = new Map<number, number>();
    const peak = new Map<number, number>();
    const sampler = setInterval(() => {
      for (const pid of listeningPids(cluster)) {
        const mb = rssMb(pid);
        if (mb === undefined) continue;
        peak.set(pid, Math.max(peak.get(pid) ?? 0, mb));
        if (mb > MAX_MEMORY_MB && !crossed.has(pid)) crossed.set(pid, now());
      }
    }, RSS_POLL_MS);

    const leaks: ProbeResult[] = [];
    const started = now();
    while (now() - started < LOAD_MS) {
      void probeOnce(port, `/leak?mb=${LEAK_MB}`, 10_000).then((r) => leaks.push(r));
      await sleep(LEAK_EVERY_MS);
    }
    // the last recycle decided finishes (its old worker retired) before the load stops
    await until(() => {
      const decided = cluster.lines.filter(byMsg(RECYCLE_MSG));
      return decided.every((d) => cluster.lines.some(byMsg('worker retired', { workerPid: d['workerPid'] }))) ? true : undefined;
    }, 15_000);
    await sleep(1_000);
    clearInterval(sampler);
    await load.stop();
    const probes = await probe.stop();
    const metrics = await fetch(`http://127.0.0.1:${cluster.metricsPort}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const restartsMemory = /^flotilla_worker_restarts_total\{reason="memory"\} (\d+)/m.exec(metrics)?.[1] ?? 'none';
    await cluster.stop();

    const recycles: Recycle[] = cluster.lines.filter(byMsg(RECYCLE_MSG)).map((d) => {
      const pid = d['workerPid'] as number;
      const slot = d['slot'] as number;
      const up = cluster.lines.find((l) => l.msg === 'worker listening' && l['slot'] === slot && l.at >= d.at && l['workerPid'] !== pid);
      const retired = cluster.lines.find(byMsg('worker retired', { workerPid: pid }));
      return {
        slot,
        pid,
        decidedAt: d.at,
        crossedAt: crossed.get(pid),
        listeningAt: up?.at,
        retiredAt: retired?.at,
        shutdownDone: cluster.lines.some((l) => l.pid === pid && l.msg === 'shutdown: done'),
      };
    });
    const failedLoad = load.outcomes.filter((o) => o.status !== 200);
    const failedProbes = probes.filter((p) => p.status !== 200);
    const failedLeaks = leaks.filter((p) => p.status !== 200);
    const cheap = load.outcomes.length + probes.length;
    const lost = failedLoad.length + failedProbes.length;
    const toDecision = recycles.flatMap((r) => (r.crossedAt === undefined ? [] : [r.decidedAt - r.crossedAt]));
    const toListening = recycles.flatMap((r) =>
      r.crossedAt === undefined || r.listeningAt === undefined ? [] : [r.listeningAt - r.crossedAt],
    );
    const decisionToListening = recycles.flatMap((r) => (r.listeningAt === undefined ? [] : [r.listeningAt - r.decidedAt]));
    for (const o of failedLoad.slice(0, 8)) {
      // against the old worker's own shutdown: a request written on a keep-alive socket as the worker closes it can be lost
      const down = cluster.lines.find((l) => l.pid === o.boundPid && l.msg === 'worker shutting down');
      const rel = (at: number | undefined) => (at === undefined ? 'never' : `${fmt(at - (down?.at ?? Number.NaN))} ms`);
      notes.push(
        `lost keep-alive request sent ${fmt(o.sentAt - started)} ms into the load on a socket bound to ${o.boundPid ?? 'no worker yet'}: ${o.error ?? `status ${o.status}`}` +
          (down === undefined
            ? ''
            : `; relative to that worker's "worker shutting down" line: handed to undici ${rel(o.sentAt)}, head written ${rel(o.writtenAt)}, failed ${rel(o.endAt)}`),
      );
    }
    for (const p of failedProbes.slice(0, 8))
      notes.push(`lost new-connection probe sent ${fmt(p.sentAt - started)} ms into the load: ${p.error ?? `status ${p.status}`}`);
    for (const r of recycles) {
      notes.push(
        `slot ${r.slot}, pid ${r.pid} (peak RSS ${fmt(peak.get(r.pid) ?? Number.NaN)} MiB in our samples): limit crossed ${r.crossedAt === undefined ? 'not seen by our sampler' : `at +${fmt(r.crossedAt - started)} ms`}, ` +
          `recycle decided at +${fmt(r.decidedAt - started)} ms, replacement listening at +${fmt((r.listeningAt ?? Number.NaN) - started)} ms, ` +
          `old worker retired at +${fmt((r.retiredAt ?? Number.NaN) - started)} ms, its graceful shutdown ${r.shutdownDone ? 'logged "shutdown: done"' : 'NOT logged as done'}`,
      );
    }
    const ordered = recycles.filter((r) => r.listeningAt !== undefined && r.retiredAt !== undefined && r.listeningAt <= r.retiredAt).length;
    return {
      rows: [
        info(
          NAME,
          'set-up',
          `2 workers, cluster.maxMemoryMB ${MAX_MEMORY_MB} (heartbeats every 1 s, 3 in a row above it); \`GET /leak?mb=${LEAK_MB}\` on a new connection every ${LEAK_EVERY_MS} ms; ${RATE} req/s \`GET /who\` on ${CONNECTIONS} keep-alive connections + a new-connection probe every ${PROBE_EVERY_MS} ms; ${LOAD_MS / 1000} s`,
        ),
        info(
          NAME,
          'recycles seen (primary log) / replacement listening before the old worker retired',
          `${recycles.length} (reasons: ${[...new Set(cluster.lines.filter(byMsg(RECYCLE_MSG)).map((l) => l['reason']))].join(', ') || 'none'}; flotilla_worker_restarts_total{reason="memory"} ${restartsMemory}) / ${ordered} of ${recycles.length}`,
        ),
        judged(
          NAME,
          'requests lost among those not sent to the leaking route',
          `${lost} of ${cheap} (keep-alive ${failedLoad.length} of ${load.outcomes.length}, new connections ${failedProbes.length} of ${probes.length})`,
          '0',
          lost === 0 && recycles.length > 0,
        ),
        info(NAME, 'leak requests failed', `${failedLeaks.length} of ${leaks.length}`),
        info(
          NAME,
          'limit crossed (our RSS samples, every 50 ms) → recycle decided / → replacement listening, median (max)',
          `${fmt(percentile(toDecision, 50))} (${fmt(max(toDecision))}) ms / ${fmt(percentile(toListening, 50))} (${fmt(max(toListening))}) ms over ${toListening.length} recycles; decision → listening median ${fmt(percentile(decisionToListening, 50))} ms`,
        ),
      ],
      notes,
    };
  } finally {
    cluster.dispose();
  }
}

/** Pids of every worker that has logged `worker listening` (the replacements included). */
function listeningPids(cluster: Cluster): number[] {
  return [...new Set(cluster.lines.filter(byMsg('worker listening')).map((l) => l['workerPid'] as number))];
}
