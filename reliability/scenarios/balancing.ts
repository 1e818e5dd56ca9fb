import { resolveConfig } from '../../src/config/validate.ts';
import { listeningSocketHolders } from '../../tools/proc.ts';
import { now, sleep, within } from '../lib/clock.ts';
import { byMsg, Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { describeKinds, FreshLoad, type FreshOutcome, freshRequest } from '../lib/fresh.ts';
import { Load } from '../lib/load.ts';
import { cpuMs, whenGone } from '../lib/proc.ts';
import { info, judged, type Row } from '../lib/report.ts';
import type { Runtime } from '../lib/runtime.ts';
import { fmt, max, min, percentile } from '../lib/stats.ts';

type Mode = 'primary' | 'kernel';
const MODES: readonly Mode[] = ['primary', 'kernel'];
/** The mode a cluster runs without `cluster.balancing`: its figures are judged, the others' compared with them. */
const DEFAULT_MODE = resolveConfig({}).cluster.balancing;

/** The steady load of the failure runs: new connections per second, open loop. */
const RATE = 1_000;
const TIMEOUT_MS = 3_000;
const RUNS = 3;
const UNEVEN_WORKERS = 4;

/**
 * `cluster.balancing: primary` against `kernel` under a load of a new TCP
 * connection per request (`Connection: close`, open loop, every outcome
 * recorded): what each loses when a worker is killed (`kill -9`), during a
 * rolling restart (SIGHUP) and at a SIGTERM of the tree; how many new
 * connections wait for a worker whose event loop is blocked for 1 s, or stuck
 * until the watchdog replaces it; and how evenly the workers share the
 * requests (4 workers; new connections, light and saturating, and keep-alive
 * ones). The default mode's losses on graceful restarts and SIGTERM are
 * judged (0), the other's reported beside them. See reliability/README.md.
 */
export async function balancing(ctx: Context): Promise<ScenarioOutcome> {
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const mode of MODES) {
    const name = `balancing: ${mode}`;
    const judge = (figure: string, value: string, failed: number) =>
      mode === DEFAULT_MODE ? judged(name, figure, value, '0', failed === 0) : info(name, figure, value);
    ctx.log(`${name}: kill -9, rolling restart, SIGTERM, a blocked and a stuck worker, the spread`);
    const kills = await repeat(() => killRun(ctx.runtime, mode));
    const rolls = await repeat(() => rollingRun(ctx.runtime, mode));
    const terms = await repeat(() => sigtermRun(ctx.runtime, mode));
    const busy = await busyRun(ctx.runtime, mode);
    const stuck = await stuckRun(ctx.runtime, mode);
    const spread = await spreadRun(ctx.runtime, mode);
    const failedOf = (runs: readonly Run[]) => runs.flatMap((r) => r.failed);
    const sent = (runs: readonly Run[]) => runs.reduce((s, r) => s + r.sent, 0);
    const perRun = (runs: readonly Run[]) => runs.map((r) => r.failed.length).join(', ');
    const termFailed = failedOf(terms);
    rows.push(
      info(name, 'listening sockets on the app port (2 workers)', kills[0]?.sockets ?? 'n/a'),
      info(
        name,
        `kill -9 of one of 2 workers under ${RATE} new connections/s: failed requests (${RUNS} runs)`,
        `${failedOf(kills).length} of ${sent(kills)} (per run: ${perRun(kills)}; ${describeKinds(failedOf(kills))})`,
      ),
      judge(
        `rolling restart (SIGHUP) under ${RATE} new connections/s: failed requests (${RUNS} runs)`,
        `${failedOf(rolls).length} of ${sent(rolls)} (per run: ${perRun(rolls)}; ${describeKinds(failedOf(rolls))})`,
        failedOf(rolls).length,
      ),
      judge(
        `SIGTERM under ${RATE} new connections/s: failed among the connections established before the signal (${RUNS} runs)`,
        `${termFailed.length} of ${terms.reduce((s, r) => s + (r.before ?? 0), 0)} (per run: ${perRun(terms)}; ${describeKinds(termFailed)})`,
        termFailed.length,
      ),
      info(name, 'SIGTERM: connections attempted after the signal', describeKinds(terms.flatMap((r) => r.after ?? []))),
      info(
        name,
        'latency p99 in the second before the kill / SIGHUP / SIGTERM (did the cluster keep up with the load?)',
        `${[kills, rolls, terms].map((runs) => runs.map((r) => fmt(r.p99Before, 1)).join(', ')).join(' / ')} ms`,
      ),
      info(
        name,
        `a worker's event loop blocked 1 s: new connections that waited > 500 ms for it / failed`,
        `${busy.waited} of ${busy.during} started meanwhile (${fmt((busy.waited / Math.max(1, busy.during)) * 100)} %) / ${busy.failed}`,
      ),
      info(
        name,
        `a worker stuck in while (true) {} until the watchdog replaces it (${fmt(stuck.replacedMs / 1000, 1)} s): new connections that waited > 1 s / failed`,
        `${stuck.waited} of ${stuck.during} started meanwhile (${fmt((stuck.waited / Math.max(1, stuck.during)) * 100)} %, median wait ${fmt(stuck.medianWaitMs)} ms) / ${describeKinds(stuck.failed)}`,
      ),
      ...spread.map((s) => info(name, `spread over ${UNEVEN_WORKERS} workers, ${s.what}: requests per worker, max/min`, s.value)),
    );
    for (const r of [...kills, ...rolls, ...terms]) notes.push(...r.notes.map((n) => `${name}: ${n}`));
  }
  return { rows, notes };
}

interface Run {
  sockets: string;
  /** Latency of the requests answered in the second before the event, p99: the cluster kept up with the load if it is small. */
  p99Before: number;
  sent: number;
  failed: FreshOutcome[];
  /** SIGTERM: connections established before the signal, and the outcomes of those attempted after it. */
  before?: number;
  after?: FreshOutcome[];
  notes: string[];
}

async function repeat(run: () => Promise<Run>): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await run());
  return runs;
}

/** A fresh 2-worker cluster in `mode` under the steady load of new connections; `act` does the damage and says when it is over. */
async function underLoad(
  runtime: Runtime,
  mode: Mode,
  act: (cluster: Cluster) => Promise<{ at: number; notes?: string[] }>,
): Promise<{ cluster: Cluster; outcomes: FreshOutcome[]; at: number; sockets: string; p99Before: number; notes: string[] }> {
  const cluster = new Cluster({ runtime, config: { cluster: { balancing: mode } } });
  try {
    await cluster.ready();
    const sockets = describeListeners(listeningSocketHolders(cluster.appPort), cluster);
    const load = new FreshLoad({ port: cluster.appPort, rate: RATE, timeoutMs: TIMEOUT_MS }).start();
    await sleep(1_000);
    const { at, notes = [] } = await act(cluster);
    const outcomes = await load.stop();
    await cluster.stop();
    const steady = outcomes.filter((o) => o.kind === 'ok' && o.endAt < at && o.startAt >= at - 1_000).map((o) => o.endAt - o.startAt);
    return { cluster, outcomes, at, sockets, p99Before: percentile(steady, 99), notes };
  } finally {
    cluster.dispose();
  }
}

/** `1 socket, held by the primary` / `1 socket, held by the primary and 2 workers` / `2 sockets, held by 1 worker; 1 worker`. */
function describeListeners(sockets: readonly number[][], cluster: Cluster): string {
  const workers = new Set(cluster.workers.values());
  const who = (pids: readonly number[]) => {
    const w = pids.filter((p) => workers.has(p)).length;
    const primary = pids.includes(cluster.pid) ? 'the primary' : '';
    return [primary, w === 0 ? '' : `${w} worker${w === 1 ? '' : 's'}`].filter((x) => x !== '').join(' and ') || 'another process';
  };
  if (sockets.length === 1) return `1 socket, held by ${who(sockets[0] ?? [])}`;
  return `${sockets.length} sockets, held by ${sockets.map(who).join('; ')}`;
}

/** kill -9 of the worker of slot 0, then 2 s of load: every failure counts (in-flight requests of the killed worker included). */
async function killRun(runtime: Runtime, mode: Mode): Promise<Run> {
  const { outcomes, sockets, p99Before, notes } = await underLoad(runtime, mode, async (cluster) => {
    const at = now();
    process.kill(cluster.workers.get(0) as number, 'SIGKILL');
    await cluster.waitFor((l) => l.msg === 'worker listening' && l.at >= at - 1, 'the replacement', 10_000);
    await sleep(1_000);
    return { at };
  });
  return { sockets, p99Before, sent: outcomes.length, failed: outcomes.filter((o) => o.kind !== 'ok'), notes };
}

/** SIGHUP on an unchanged config: each worker replaced in turn (the new one listens, then the old one retires). */
async function rollingRun(runtime: Runtime, mode: Mode): Promise<Run> {
  const { outcomes, sockets, p99Before, notes } = await underLoad(runtime, mode, async (cluster) => {
    const at = now();
    cluster.signal('SIGHUP');
    await cluster.waitFor(byMsg('reload: done, the cluster runs on the new config'), 'the end of the reload', 20_000);
    // the last old worker's listener is closed before the reload is done; what it had queued fails now
    await sleep(500);
    return { at };
  });
  return { sockets, p99Before, sent: outcomes.length, failed: outcomes.filter((o) => o.kind !== 'ok'), notes };
}

/** SIGTERM to the primary; the load goes on for a second. Judged: connections established before the signal. */
async function sigtermRun(runtime: Runtime, mode: Mode): Promise<Run> {
  let exited = true;
  const { outcomes, at, sockets, p99Before, cluster } = await underLoad(runtime, mode, async (c) => {
    const signalled = now();
    const pids = c.pids();
    c.signal('SIGTERM');
    await sleep(1_000);
    exited = (await within(c.exited, 15_000)) !== undefined && (await whenGone(pids, 2_000)) !== undefined;
    return { at: signalled };
  });
  const before = outcomes.filter((o) => o.connectedAt !== undefined && o.connectedAt < at);
  const notes = before
    .filter((o) => o.kind !== 'ok')
    .slice(0, 5)
    .map(
      (o) =>
        `SIGTERM: a connection established ${fmt(at - (o.connectedAt ?? Number.NaN), 1)} ms before the signal failed after ${fmt(o.endAt - o.startAt)} ms: ${o.kind} (${o.error ?? o.status})`,
    );
  if (!exited) notes.push(`SIGTERM: the tree did not exit within 15 s${cluster.tail(5)}`);
  return {
    sockets,
    p99Before,
    sent: outcomes.length,
    failed: before.filter((o) => o.kind !== 'ok'),
    before: before.length,
    after: outcomes.filter((o) => o.connectedAt === undefined || o.connectedAt >= at),
    notes,
  };
}

/** `GET /busy?ms=1000` blocks one worker's event loop; how many new connections started meanwhile wait for it. */
async function busyRun(runtime: Runtime, mode: Mode): Promise<{ during: number; waited: number; failed: number }> {
  const cluster = new Cluster({ runtime, config: { cluster: { balancing: mode } } });
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const load = new FreshLoad({ port, rate: RATE / 3, timeoutMs: TIMEOUT_MS }).start();
    await sleep(500);
    const blocked = freshRequest(port, '/busy?ms=1000', 5_000);
    const from = now();
    await blocked;
    const to = now();
    await sleep(300);
    const outcomes = await load.stop();
    await cluster.stop();
    // started while the worker was blocked, leaving it 200 ms to have started
    const during = outcomes.filter((o) => o.startAt >= from + 100 && o.startAt <= to - 200);
    return {
      during: during.length,
      waited: during.filter((o) => o.endAt - o.startAt > 500).length,
      failed: during.filter((o) => o.kind !== 'ok').length,
    };
  } finally {
    cluster.dispose();
  }
}

/**
 * `GET /hang` (`while (true) {}`) sticks one worker until the heartbeat watchdog kills and replaces it
 * (the framework's default `cluster.heartbeatTimeoutMs`); how many new connections started meanwhile wait
 * for it, and fail when it is killed.
 */
async function stuckRun(
  runtime: Runtime,
  mode: Mode,
): Promise<{ during: number; waited: number; medianWaitMs: number; failed: FreshOutcome[]; replacedMs: number }> {
  const cluster = new Cluster({ runtime, config: { cluster: { balancing: mode } } });
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const load = new FreshLoad({ port, rate: 200, timeoutMs: 15_000 }).start();
    await sleep(500);
    const hungAt = now();
    void freshRequest(port, '/hang', 30_000);
    const replaced = await cluster.waitFor((l) => l.msg === 'worker listening' && l.at > hungAt, 'the replacement', 30_000);
    await sleep(1_000);
    const outcomes = await load.stop();
    await cluster.stop();
    const during = outcomes.filter((o) => o.startAt >= hungAt + 100 && o.startAt <= replaced.at);
    const waits = during.filter((o) => o.endAt - o.startAt > 1_000).map((o) => o.endAt - o.startAt);
    return {
      during: during.length,
      waited: waits.length,
      medianWaitMs: percentile(waits, 50),
      failed: during.filter((o) => o.kind !== 'ok'),
      replacedMs: replaced.at - hungAt,
    };
  } finally {
    cluster.dispose();
  }
}

/** 4 workers: who serves what, with new connections (light and saturating) and with keep-alive ones. */
async function spreadRun(runtime: Runtime, mode: Mode): Promise<{ what: string; value: string }[]> {
  const cluster = new Cluster({ runtime, config: { workers: UNEVEN_WORKERS, cluster: { balancing: mode } } });
  try {
    await cluster.ready(UNEVEN_WORKERS);
    const port = cluster.appPort;
    const out: { what: string; value: string }[] = [];
    const light = new FreshLoad({ port, rate: 200, timeoutMs: TIMEOUT_MS }).start();
    await sleep(3_000);
    const workers = [...cluster.workers.values()];
    out.push({
      what: 'new connections at 200/s, 3 s',
      value: share(
        (await light.stop()).map((o) => o.pid),
        workers,
      ),
    });
    const cpu0 = cpuMs(cluster.pid);
    const heavy = new FreshLoad({ port, concurrency: 8, rate: 0, timeoutMs: TIMEOUT_MS }).start();
    await sleep(3_000);
    const heavyOut = await heavy.stop();
    const primaryCpu = ((cpuMs(cluster.pid) - cpu0) / (heavy.stoppedAt - heavy.startedAt)) * 100;
    out.push({
      what: 'new connections, closed loop (8 at a time), 3 s',
      value: `${share(
        heavyOut.map((o) => o.pid),
        workers,
      )}; ${fmt(heavyOut.length / 3)} req/s, the primary using ${fmt(primaryCpu)} % of a CPU`,
    });
    const pids: (number | undefined)[] = [];
    const connections: string[] = [];
    for (let round = 0; round < 3; round++) {
      const load = new Load({ port, connections: 16, rate: 0, timeoutMs: TIMEOUT_MS }).start();
      await sleep(1_000);
      await load.stop();
      pids.push(...load.outcomes.map((o) => o.pid));
      const byConn = new Map(load.outcomes.filter((o) => o.pid !== undefined).map((o) => [o.conn, o.pid]));
      connections.push(perWorker([...byConn.values()], workers).join('/'));
    }
    out.push({
      what: '16 keep-alive connections, closed loop, 3 rounds of 1 s',
      value: `${share(pids, workers)}; connections per worker in each round: ${connections.join(', ')}`,
    });
    await cluster.stop();
    return out;
  } finally {
    cluster.dispose();
  }
}

/** Counts per worker, largest first (`0` for a worker that served nothing). */
function perWorker(pids: readonly (number | undefined)[], workers: readonly number[]): number[] {
  const counts = new Map<number, number>(workers.map((w) => [w, 0]));
  for (const pid of pids) if (pid !== undefined) counts.set(pid, (counts.get(pid) ?? 0) + 1);
  return [...counts.values()].sort((a, b) => b - a);
}

/** `1210 / 1190 / 1010 / 990 (max/min 1.22)`. */
function share(pids: readonly (number | undefined)[], workers: readonly number[]): string {
  const counts = perWorker(pids, workers);
  return `${counts.join(' / ')} (max/min ${min(counts) === 0 ? '∞' : fmt(max(counts) / min(counts), 2)})`;
}
