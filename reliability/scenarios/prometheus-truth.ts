import { Pool } from 'undici';
import { isAlive } from '../../tools/proc.ts';
import { type MatrixSeries, Prometheus, prometheusBinary } from '../../tools/prometheus.ts';
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
 * watchdog lets it be). The harness is `test/integration/prometheus-truth.test.ts`'s.
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
  let pool: Pool | undefined;
  try {
    await cluster.ready();
    const { appPort, metricsPort } = cluster;
    const first = new Set(cluster.workers.values());
    let warm = 0;
    for (let i = 0; i < WARM_UP; i++) if ((await probeOnce(appPort, '/who', 5_000)).status === 200) warm++;
    prometheus = new Prometheus(binary, { target: `127.0.0.1:${metricsPort}` });
    await prometheus.ready();
    const p = prometheus;
    const start = await waitForSample(p, (at, value) => value === warm && at > 0, 3, 'Prometheus to scrape the warm-up count');

    pool = new Pool(`http://127.0.0.1:${appPort}`, { connections: 8, pipelining: 1 });
    const load = new OpenLoad(pool, appPort);
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
      await Promise.all([load.run(loadMs), disturbance()]);
    } finally {
      load.stop();
      await load.settled();
    }
    note(`load over: ${load.ok} × 2xx`);

    const loadEnd = now();
    await sleep(3_500);
    const end = await waitForSample(p, (at) => at >= loadEnd + 2_500, 1, 'a scrape ~3 intervals after the load');
    const windowMs = end.at - start.at + 1;
    const range = `[${windowMs}ms]`;
    const increase = await p.scalar(`sum(increase(${SERIES}${range}))`, end.at);
    const atEnd = await p.scalar(`sum(${SERIES})`, end.at);
    const atStart = await p.scalar(`sum(${SERIES})`, start.at);
    const resets = await p.scalar(`sum(resets(${ROUTE}${range}))`, end.at);
    const minUp = await p.scalar(`min_over_time(up${range})`, end.at);
    const scrapes = await p.scalar(`count_over_time(up${range})`, end.at);
    const maxStale = await p.scalar(`max_over_time(flotilla_scrape_workers_stale${range})`, end.at);
    const maxMissing = await p.scalar(`max_over_time(flotilla_scrape_workers_missing${range})`, end.at);
    const rates = await p.queryRange(`sum(rate(${ROUTE}[5s]))`, start.at + 5_000, end.at, 1);
    await cluster.stop();
    let victimAnswers: Truth['victimAnswers'];
    if (killed !== undefined) {
      const { pid, at } = killed;
      const mine = load.answered.filter((a) => a.pid === pid);
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
      sent: load.sent,
      ok: load.ok,
      failed: load.failed + load.other + load.skipped,
      errors: load.errors,
      windowS: windowMs / 1000,
      scrapes,
      increase,
      rawDelta: atEnd !== undefined && atStart !== undefined ? atEnd - atStart : undefined,
      resets,
      peakRate: maxValue(rates),
      minUp,
      maxStale,
      maxMissing,
    };
  } finally {
    await pool?.destroy();
    await prometheus?.stop();
    cluster.dispose();
  }
}

/** The latest scrape of `SERIES` (summed per scrape timestamp) that satisfies `accept`, once the last `count` all do; 20 s at most. */
async function waitForSample(
  prometheus: Prometheus,
  accept: (at: number, value: number) => boolean,
  count: number,
  what: string,
): Promise<{ at: number; value: number }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const points = sumByTimestamp(await prometheus.samples(`${SERIES}[15s]`));
    const last = points.slice(-count);
    const found = last.at(-1);
    if (found !== undefined && last.length === count && last.every((p) => accept(p.at, p.value))) return found;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last samples: ${JSON.stringify(points.slice(-5))}${prometheus.tail()}`);
    await sleep(250);
  }
}

function sumByTimestamp(series: MatrixSeries[]): { at: number; value: number }[] {
  const sums = new Map<number, number>();
  for (const s of series)
    for (const [at, value] of s.values) sums.set(Math.round(at * 1000), (sums.get(Math.round(at * 1000)) ?? 0) + Number(value));
  return [...sums].sort(([a], [b]) => a - b).map(([at, value]) => ({ at, value }));
}

function maxValue(series: MatrixSeries[]): number {
  let peak = Number.NEGATIVE_INFINITY;
  for (const s of series) for (const [, value] of s.values) peak = Math.max(peak, Number(value));
  return peak;
}

/**
 * An open-loop load: `RATE` requests a second whatever the answers take, on the keep-alive connections of a
 * pool, every `FRESH_EVERY`-th on a new connection; counts what the client got (as the integration test's).
 */
class OpenLoad {
  sent = 0;
  ok = 0;
  other = 0;
  failed = 0;
  skipped = 0;
  readonly errors = new Map<string, number>();
  /** Every 2xx: the pid that answered and when (ms since the epoch). */
  readonly answered: { pid: number; at: number }[] = [];
  readonly #pool: Pool;
  readonly #port: number;
  readonly #inFlight = new Set<Promise<void>>();
  #running = true;

  constructor(pool: Pool, port: number) {
    this.#pool = pool;
    this.#port = port;
  }

  async run(durationMs: number): Promise<void> {
    const started = performance.now();
    let issued = 0;
    for (;;) {
      const elapsed = performance.now() - started;
      if (!this.#running || elapsed >= durationMs) return;
      const due = Math.floor((elapsed / 1000) * RATE);
      for (; issued < due; issued++) {
        if (this.#inFlight.size >= MAX_IN_FLIGHT) this.skipped++;
        else this.#send(issued % FRESH_EVERY === 0);
      }
      await sleep(5);
    }
  }

  stop(): void {
    this.#running = false;
  }

  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  #send(fresh: boolean): void {
    this.sent++;
    const request = fresh ? this.#fresh() : this.#pooled();
    const done = request.then(
      ({ status, pid }) => {
        if (status >= 200 && status < 300) {
          this.ok++;
          if (pid !== undefined) this.answered.push({ pid, at: now() });
        } else this.other++;
      },
      (error: unknown) => {
        this.failed++;
        const message = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
        this.errors.set(message, (this.errors.get(message) ?? 0) + 1);
      },
    );
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }

  async #pooled(): Promise<{ status: number; pid: number | undefined }> {
    const res = await this.#pool.request({ method: 'GET', path: '/who', headersTimeout: 20_000, bodyTimeout: 20_000 });
    const match = /"pid":(\d+)/.exec(await res.body.text());
    return { status: res.statusCode, pid: match === null ? undefined : Number(match[1]) };
  }

  async #fresh(): Promise<{ status: number; pid: number | undefined }> {
    const r = await probeOnce(this.#port, '/who', 20_000);
    if (r.error !== undefined) throw new Error(r.error.split(':')[0]);
    return { status: r.status, pid: r.pid };
  }
}
