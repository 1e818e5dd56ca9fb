import { isAlive } from '../../tools/proc.ts';
import { Prometheus, prometheusBinary } from '../../tools/prometheus.ts';
import { counterWindow, windowEnd, windowStart } from '../../tools/prometheus-window.ts';
import { SteadyLoad } from '../../tools/steady-load.ts';
import { now, sleep } from '../lib/clock.ts';
import { byMsg, Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { probeOnce } from '../lib/probe.ts';
import { info, judged, type Row } from '../lib/report.ts';
import { fmt } from '../lib/stats.ts';

const NAME = 'Prometheus truth';
/** Offered load on `GET /who`, requests per second. */
const RATE = 200;
/** Every n-th request goes on a new connection (node:cluster deals connections round-robin, so every worker serves). */
const FRESH_EVERY = 10;
const MAX_IN_FLIGHT = 400;
const WARM_UP = 20;
const DISTURB_AT_MS = 5_000;
const BUSY_MS = 15_000;
const SERIES = 'http_requests_total{route="/who",status="200"}';
const ROUTE = 'http_requests_total{route="/who"}';

type Kind = 'kill' | 'sighup' | 'busy';

interface Truth {
  kind: Kind;
  events: string[];
  sent: number;
  ok: number;
  failed: number;
  errors: Map<string, number>;
  windowS: number;
  scrapes: number | undefined;
  increase: number | undefined;
  rawDelta: number | undefined;
  resets: number | undefined;
  peakRate: number;
  minUp: number | undefined;
  maxStale: number | undefined;
  maxMissing: number | undefined;
  /** kill: 2xx answered by the killed worker in all, and in the last 1 s and 2 s before the kill (one push interval is 1 s). */
  victimAnswers: { total: number; lastSecond: number; lastTwoSeconds: number } | undefined;
}

/**
 * What a real Prometheus (Debian's `prometheus`, scraping the primary every
 * second) makes of the summed `http_requests_total` under a steady 200 req/s,
 * in three separate measurements: kill -9 of a worker, a SIGHUP rolling
 * restart, and a worker busy for 15 s (heartbeatTimeoutMs 30 s so that the
 * watchdog lets it be). The harness (`tools/steady-load.ts`, `tools/prometheus-window.ts`) is
 * `test/integration/prometheus-truth.test.ts`'s.
 */
export async function prometheusTruth(ctx: Context): Promise<ScenarioOutcome> {
  const binary = prometheusBinary();
  if (binary === undefined) throw new Error('the prometheus binary is not on PATH (Debian package "prometheus")');
  const rows: Row[] = [
    info(
      NAME,
      'set-up',
      `each: a fresh 2-worker cluster, Prometheus scraping its primary every 1 s, ${RATE} req/s \`GET /who\` (open loop; 1 in ${FRESH_EVERY} on a new connection, the rest on 8 keep-alive connections; client timeout 20 s); the window runs from a scrape before the load to one ~3 s after it`,
    ),
  ];
  const notes: string[] = [];
  const infoRow = (figure: string, value: string) => info(NAME, figure, value);
  const judgedRow = (figure: string, value: string, target: string, met: boolean) => judged(NAME, figure, value, target, met);
  for (const kind of ['kill', 'sighup', 'busy'] as const) {
    const t = await measure(ctx, binary, kind);
    ctx.log(`prometheus ${kind}: ${t.ok} × 2xx, increase ${fmt(t.increase ?? Number.NaN, 1)}, resets ${t.resets}, min up ${t.minUp}`);
    const label = { kill: 'kill -9 of a worker', sighup: 'SIGHUP rolling restart', busy: `a worker busy ${BUSY_MS / 1000} s` }[kind];
    const diff = t.increase === undefined ? Number.NaN : ((t.increase - t.ok) / t.ok) * 100;
    const rawDiff = t.rawDelta === undefined ? Number.NaN : ((t.rawDelta - t.ok) / t.ok) * 100;
    rows.push(
      // a kill -9 loses what the worker counted since its last push: judged against that below, not as a share of the window
      (kind === 'kill' ? infoRow : judgedRow)(
        `${label}: client 2xx / increase() over the window / difference`,
        `${t.ok} / ${fmt(t.increase ?? Number.NaN, 1)} / ${fmt(diff, 2)} % (raw end - start ${t.rawDelta ?? 'n/a'}, ${fmt(rawDiff, 2)} %; ${t.failed} failed of ${t.sent} sent)`,
        'within 2 %',
        Math.abs(diff) <= 2,
      ),
      judged(NAME, `${label}: resets() over the window`, String(t.resets ?? 'n/a'), '0', t.resets === 0),
      judged(
        NAME,
        `${label}: max sum(rate()[5s]) vs offered`,
        `${fmt(t.peakRate, 1)}/s = ${fmt(t.peakRate / RATE, 2)} × ${RATE}/s`,
        '<= 1.5 ×',
        t.peakRate <= 1.5 * RATE,
      ),
      judged(
        NAME,
        `${label}: min up over the window (${t.scrapes ?? 'n/a'} scrapes in ${fmt(t.windowS, 1)} s)`,
        `${t.minUp ?? 'n/a'} (max flotilla_scrape_workers_stale ${t.maxStale ?? 'n/a'}, _missing ${t.maxMissing ?? 'n/a'})`,
        '1',
        t.minUp === 1,
      ),
    );
    if (t.victimAnswers !== undefined && t.increase !== undefined) {
      const v = t.victimAnswers;
      rows.push(
        judged(
          NAME,
          `${label}: counts missing from increase() vs the killed worker's 2xx in the last push interval (1 s) before the kill`,
          `${fmt(t.ok - t.increase)} missing; the killed worker answered ${v.lastSecond} in its last 1 s, ${v.lastTwoSeconds} in its last 2 s, ${v.total} in all`,
          '<= its last 1 s',
          t.ok - t.increase <= v.lastSecond + 0.5,
        ),
      );
    }
    notes.push(
      `${label}: ${t.events.join('; ')}${t.failed > 0 ? `; client errors: ${[...t.errors].map(([m, n]) => `${n} × ${m}`).join(', ')}` : ''}`,
    );
  }
  return { rows, notes };
}

async function measure(ctx: Context, binary: string, kind: Kind): Promise<Truth> {
  const config: Record<string, unknown> = { logging: { requests: false } };
  if (kind === 'busy') config['cluster'] = { heartbeatTimeoutMs: 30_000 };
  const cluster = new Cluster({ runtime: ctx.runtime, config });
  let prometheus: Prometheus | undefined;
  let load: SteadyLoad | undefined;
  try {
    await cluster.ready();
    const { appPort, metricsPort } = cluster;
    const first = new Set(cluster.workers.values());
    let warm = 0;
    for (let i = 0; i < WARM_UP; i++) if ((await probeOnce(appPort, '/who', 5_000)).status === 200) warm++;
    prometheus = new Prometheus(binary, { target: `127.0.0.1:${metricsPort}` });
    await prometheus.ready();
    const start = await windowStart(prometheus, SERIES, warm);

    const steady = new SteadyLoad({ port: appPort, path: '/who', rate: RATE, freshEvery: FRESH_EVERY, maxInFlight: MAX_IN_FLIGHT });
    load = steady;
    const events: string[] = [];
    let killed: { pid: number; at: number } | undefined;
    const loadStart = now();
    const note = (what: string) => events.push(`${fmt((now() - loadStart) / 1000, 1)} s ${what}`);
    const sleepUntil = (offsetMs: number) => sleep(loadStart + offsetMs - now());
    const loadMs = { kill: 15_000, sighup: 20_000, busy: DISTURB_AT_MS + BUSY_MS + 5_000 }[kind];

    const disturbance = async () => {
      await sleepUntil(DISTURB_AT_MS);
      if (kind === 'kill') {
        const victim = cluster.workers.get(0);
        if (victim === undefined || !isAlive(victim)) throw new Error('no live worker in slot 0 to kill');
        process.kill(victim, 'SIGKILL');
        killed = { pid: victim, at: now() };
        note(`kill -9 worker ${victim}`);
        const up = await cluster.waitFor(
          (l) => l.msg === 'worker listening' && !first.has(l['workerPid'] as number),
          'the replacement',
          15_000,
        );
        note(`replacement ${up['workerPid']} listening`);
      } else if (kind === 'sighup') {
        cluster.signal('SIGHUP');
        note('SIGHUP');
        const done = await cluster.waitFor(
          (l) => l.msg === 'rolling restart: done' || l.msg === 'rolling restart: stopped',
          'the end of the rolling restart',
          30_000,
        );
        note(`${done.msg} in ${done['elapsedMs']} ms`);
      } else {
        note(`GET /busy?ms=${BUSY_MS}`);
        const busy = await probeOnce(appPort, `/busy?ms=${BUSY_MS}`, BUSY_MS + 15_000);
        note(`worker ${busy.pid} answered ${busy.status} after being busy ${BUSY_MS} ms`);
        const killed = cluster.lines.find(
          byMsg('worker stopped answering heartbeats (event loop stuck): starting a replacement, then killing it'),
        );
        if (killed !== undefined) note(`the watchdog killed worker ${killed['workerPid']}`);
      }
    };
    try {
      await Promise.all([steady.run(loadMs), disturbance()]);
    } finally {
      steady.stop();
      await steady.settled();
    }
    note(`load over: ${steady.ok} × 2xx`);

    const end = await windowEnd(prometheus, SERIES, now());
    const window = await counterWindow(prometheus, SERIES, ROUTE, start, end);
    await cluster.stop();
    let victimAnswers: Truth['victimAnswers'];
    if (killed !== undefined) {
      const { pid, at } = killed;
      const mine = steady.answered.filter((a) => a.pid === pid);
      victimAnswers = {
        total: mine.length,
        lastSecond: mine.filter((a) => a.at > at - 1_000).length,
        lastTwoSeconds: mine.filter((a) => a.at > at - 2_000).length,
      };
    }
    return {
      kind,
      victimAnswers,
      events,
      sent: steady.sent,
      ok: steady.ok,
      failed: steady.failed + steady.other + steady.skipped,
      errors: steady.errors,
      windowS: window.windowMs / 1000,
      scrapes: window.scrapes,
      increase: window.increase,
      rawDelta: window.rawDelta,
      resets: window.resets,
      peakRate: window.peakRate.value,
      minUp: window.minUp,
      maxStale: window.maxStale,
      maxMissing: window.maxMissing,
    };
  } finally {
    await load?.destroy();
    await prometheus?.stop();
    cluster.dispose();
  }
}
