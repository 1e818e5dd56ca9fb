import { createRequire } from 'node:module';
import { join } from 'node:path';
import { byMsg, ClusterProcess, type LogLine, parseLine } from '../../tools/cluster-process.ts';
import { isAlive } from '../../tools/proc.ts';
import { now, sleep, within } from '../lib/clock.ts';
import { Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { FreshLoad, type FreshOutcome, freshRequest } from '../lib/fresh.ts';
import { measureCapacity } from '../lib/load.ts';
import { OpenLoad, type OpenOutcome } from '../lib/open-load.ts';
import type { OverloadContender, OverloadMode } from '../lib/options.ts';
import { Probe, type ProbeResult } from '../lib/probe.ts';
import { cpuMs, cpuSnapshot, machineLoad, whenGone } from '../lib/proc.ts';
import { info, judged, type Row } from '../lib/report.ts';
import { ROOT, type Runtime } from '../lib/runtime.ts';
import { fmt, max, percentile } from '../lib/stats.ts';

/** The CPU-bound route: ~10 ms of the worker's CPU per request. */
const PATH = '/cpu?ms=10';
/** Every client gives up after this long and destroys its socket. */
const CLIENT_TIMEOUT_MS = 5_000;
/** Capacity: closed loop, 8 connections (or 8 new connections at a time), measured for this long after a warm-up. */
const CAPACITY_MS = 2_000;
const CAPACITY_WARM_MS = 500;
/** Before the spike, the load runs at this share of capacity (JIT warm, keep-alive pool opened). */
const WARM_SHARE = 0.5;
const WARM_MS = 1_500;
/** Recovered: a run of this many recovery requests in a row (one every 100 ms) each answered within 200 ms. */
const RECOVERY_RUN = 5;
const RECOVERY_FAST_MS = 200;
const RECOVERY_CAP_MS = 30_000;
/** Capacity after the spike off by more than this share from before it: the machine's other load changed meanwhile. */
const DRIFT = 0.3;
/** The multiplier whose figures are judged (the largest given, when it is absent). */
const JUDGED_MULTIPLIER = 3;

const TARGETS = {
  goodput: 0.9,
  okP99Ms: 1_000,
  shedP99Ms: 50,
  healthP99Ms: 100,
  goneShare: 0.02,
  recoveryMs: 1_000,
};

const LABELS: Record<OverloadContender, string> = {
  'flotilla-primary': 'flotilla, balancing: primary',
  'flotilla-kernel': 'flotilla, balancing: kernel',
  fastify: 'Fastify 5, node:cluster',
  'fastify-under-pressure': 'Fastify 5, node:cluster, under-pressure',
};
const MODE_LABELS: Record<OverloadMode, string> = { fresh: 'fresh connections', 'keep-alive': 'keep-alive pool' };

/** A running contender: 2 workers on 127.0.0.1, and the lines it logged for each response. */
interface Server {
  port: number;
  /** The primary first, then its workers. */
  pids(): number[];
  /** Lines written so far for responses (cheap). */
  lineCount(): number;
  /** Every response's line: request id, status, when. */
  responseLines(): ResponseLine[];
  stop(): Promise<void>;
  dispose(): void;
  tail(): string;
}

interface ResponseLine {
  requestId: string;
  status: number;
  at: number;
  aborted: boolean;
}

/** Everything measured in one spike. */
interface Spike {
  contender: OverloadContender;
  mode: OverloadMode;
  multiplier: number;
  /** Measured just before the spike: its rate is a multiple of it, and goodput a share of it. */
  capacity: number;
  /** Measured again after the spike and the recovery: a check of the machine's drift, not used in the figures. */
  capacityAfter: number;
  rate: number;
  seconds: number;
  outcomes: OpenOutcome[];
  health: ProbeResult[];
  /** The server's lines for the spike's requests, by request id. */
  lines: Map<string, ResponseLine>;
  settledAt: number;
  /** From the last request settling to the first of a run of fast answers; undefined when not within the cap. */
  recoveryMs: number | undefined;
  /** The harness's CPU (load generator, probes, reading the server's stdout), % of one CPU, spike to settle. */
  harnessCpu: number;
  /** The server's processes' CPU over the same window, % of one CPU; the primary's alone. */
  serverCpu: number;
  primaryCpu: number;
  /** CPU used meanwhile by processes other than the harness and the server, % of the machine (all CPUs). */
  noise: number;
  connectionsOpened: number;
  peakConnections: number;
  /** Lines still coming after recovery: how long until they stopped. */
  drainMs: number;
}

/** The figures of a spike, computed once. */
interface Figures {
  sent: number;
  ok: number;
  goodput: number;
  okP99: number;
  okP50: number;
  shed: number;
  shedWithRetryAfter: number;
  shedP99: number;
  otherStatus: Map<number, number>;
  timeouts: number;
  neverSent: number;
  resets: number;
  refused: number;
  closed: number;
  errors: number;
  healthP99: number;
  healthFailed: number;
  completed: number;
  completedGone: number;
  shedGone: number;
  serverShed: number;
  unseen: number;
}

/**
 * What a 2-worker cluster with default settings does when offered more than
 * it can serve: a route computing ~10 ms of CPU per request, each
 * contender's capacity measured first on it (closed loop), then spikes of
 * open-loop load at multiples of that capacity (2× and 3× by default, 15 s
 * each) with clients that give up after 5 s, through new connections and
 * through a keep-alive pool. Goodput, latencies of the 2xx and of the 503s,
 * `/health` meanwhile, the work done for clients already gone (the server's
 * request lines matched by `X-Request-Id`) and the time to recover. flotilla's
 * two balancing modes are judged at 3×; Fastify 5 in node:cluster, bare and
 * with `@fastify/under-pressure`, are reported beside them. See
 * reliability/README.md.
 */
export async function overload(ctx: Context): Promise<ScenarioOutcome> {
  const o = ctx.options;
  const rows: Row[] = [];
  const notes: string[] = [];
  const judgedMultiplier = o.overloadMultipliers.includes(JUDGED_MULTIPLIER) ? JUDGED_MULTIPLIER : max(o.overloadMultipliers);
  const contenders = o.overloadContenders.filter((c) => {
    if (c !== 'fastify-under-pressure' || underPressureInstalled()) return true;
    rows.push({
      scenario: `overload: ${LABELS[c]}`,
      figure: 'contender',
      value: '@fastify/under-pressure is not installed (npm install: it is a devDependency)',
      target: 'runs',
      status: 'error',
    });
    return false;
  });

  const spikes: Spike[] = [];
  let round = 0;
  for (const mode of o.overloadModes) {
    // one server per contender for the mode, all up at once (idle but for the one under load), so that the
    // contenders can take turns: drifts of the machine's other load then hit them all alike
    const servers = new Map<OverloadContender, Server>();
    try {
      for (const c of contenders) servers.set(c, await startServer(ctx.runtime, c));
      for (const multiplier of o.overloadMultipliers) {
        const order = contenders.map((_, i) => contenders[(i + round) % contenders.length] as OverloadContender);
        round++;
        for (const c of order) {
          const server = servers.get(c) as Server;
          const label = `${LABELS[c]}, ${MODE_LABELS[mode]}, ${multiplier}×`;
          try {
            const capacity = await measureCapacityOf(server, mode);
            ctx.log(`overload: ${label}: capacity ${fmt(capacity)} req/s, spike at ${fmt(capacity * multiplier)} req/s`);
            spikes.push(await spike(server, c, mode, multiplier, capacity, o.overloadMs));
          } catch (error) {
            const message = (error as Error).stack ?? String(error);
            ctx.log(`overload: ${label} could not run: ${message}`);
            rows.push({
              scenario: `overload: ${LABELS[c]}, ${MODE_LABELS[mode]}`,
              figure: `${multiplier}× capacity`,
              value: message.split('\n')[0] ?? '',
              target: 'runs',
              status: 'error',
            });
            notes.push(`${label} could not run:\n\n\`\`\`\n${message.slice(0, 2000)}${server.tail()}\n\`\`\``);
          }
        }
      }
      await Promise.all([...servers.values()].map((server) => server.stop()));
    } finally {
      for (const server of servers.values()) server.dispose();
    }
  }

  for (const c of contenders) {
    const measured = (mode: OverloadMode) =>
      spikes
        .filter((x) => x.contender === c && x.mode === mode)
        .map((x) => `${fmt(x.capacity)} (${fmt(x.capacityAfter)})`)
        .join(', ') || 'n/a';
    rows.push(
      info(
        `overload: ${LABELS[c]}`,
        `capacity on GET ${PATH}, closed loop, before (after) each spike: keep-alive (8 connections) / new connections (8 at a time)`,
        `${measured('keep-alive')} / ${measured('fresh')} req/s`,
      ),
    );
    for (const mode of o.overloadModes) {
      const name = `overload: ${LABELS[c]}, ${MODE_LABELS[mode]}`;
      for (const s of spikes.filter((x) => x.contender === c && x.mode === mode)) {
        const f = figures(s);
        if (s.multiplier === judgedMultiplier && c.startsWith('flotilla')) rows.push(...judgedRows(name, s, f));
        else rows.push(info(name, `${s.multiplier}× capacity (${fmt(s.rate)} req/s, ${fmt(s.seconds)} s): figures`, summary(s, f)));
        rows.push(info(name, `${s.multiplier}× capacity: outcomes`, counts(s, f)));
      }
    }
  }
  notes.push(...comparisonTables(spikes, o.overloadModes, o.overloadMultipliers, contenders));
  const drifts = spikes.filter(drifted);
  if (drifts.length > 0) {
    notes.push(
      `The capacity measured after the spike differs by more than ${DRIFT * 100} % from the one before it (the machine's other load changed, and with it what the server could do) for ${drifts.length} of ${spikes.length} spikes: ` +
        drifts
          .map(
            (x) => `${LABELS[x.contender]}, ${MODE_LABELS[x.mode]}, ${x.multiplier}× (${fmt(x.capacity)} → ${fmt(x.capacityAfter)} req/s)`,
          )
          .join('; ') +
        '. Their goodput (and the load they were offered) is off by as much; rerun on a quieter machine before reading them closely.',
    );
  }
  notes.push(
    `Goodput: 2xx answered within the client's ${CLIENT_TIMEOUT_MS / 1000} s, per second of spike, over the capacity measured for the mode (keep-alive capacity for the keep-alive pool, new-connection capacity for fresh connections). ` +
      `"Computed for clients gone": 2xx request lines of the server whose client had given up (timed out and destroyed its socket) before the line was written, over all its 2xx lines for the spike's requests. ` +
      `Recovery: from the last spike request settling to the first of ${RECOVERY_RUN} new-connection requests in a row (one every 100 ms) answered within ${RECOVERY_FAST_MS} ms. ` +
      `A 503 target with no 503 sent is missed: at ${judgedMultiplier}× capacity the excess must be refused somehow, and what was not refused timed out or was reset.`,
  );
  return { rows, notes };
}

function underPressureInstalled(): boolean {
  try {
    createRequire(join(ROOT, 'reliability/contenders/fastify-cluster.ts')).resolve('@fastify/under-pressure');
    return true;
  } catch {
    return false;
  }
}

/**
 * Capacity on the route, closed loop, just before a spike: keep-alive (undici, 8 connections) or new connections
 * (8 at a time), as the spike's clients will come.
 */
async function measureCapacityOf(server: Server, mode: OverloadMode): Promise<number> {
  if (mode === 'keep-alive') return measureCapacity(server.port, PATH, 8, CAPACITY_MS, CAPACITY_WARM_MS);
  const warm = new FreshLoad({ port: server.port, path: PATH, rate: 0, concurrency: 8, timeoutMs: CLIENT_TIMEOUT_MS }).start();
  await sleep(CAPACITY_WARM_MS);
  await warm.stop();
  const load = new FreshLoad({ port: server.port, path: PATH, rate: 0, concurrency: 8, timeoutMs: CLIENT_TIMEOUT_MS }).start();
  await sleep(CAPACITY_MS);
  const outcomes = await load.stop();
  return outcomes.filter((x) => x.kind === 'ok').length / ((load.stoppedAt - load.startedAt) / 1000);
}

/**
 * One spike: load at half the capacity for a moment, then `multiplier` × capacity for `ms`, open loop, `/health`
 * probed every second; then, once every request has settled, the time to recover, and the server's lines.
 */
async function spike(
  server: Server,
  contender: OverloadContender,
  mode: OverloadMode,
  multiplier: number,
  capacity: number,
  ms: number,
): Promise<Spike> {
  const rate = capacity * multiplier;
  // unique across the spikes a server goes through
  const idPrefix = `ov${++spikeCounter}`;
  const load = new OpenLoad({
    port: server.port,
    path: PATH,
    rate: capacity * WARM_SHARE,
    mode,
    timeoutMs: CLIENT_TIMEOUT_MS,
    idPrefix,
  });
  load.start();
  await sleep(WARM_MS);
  const pids = server.pids();
  const cpu0 = process.cpuUsage();
  const server0 = pids.map(cpuMs);
  const machine0 = cpuSnapshot();
  const spikeAt = now();
  load.setRate(rate);
  const probe = new Probe(server.port, '/health', 1_000, CLIENT_TIMEOUT_MS);
  await sleep(ms);
  const [outcomes, health] = await Promise.all([load.stop(), probe.stop()]);
  const spikeOutcomes = outcomes.filter((x) => x.startAt >= spikeAt);
  const settledAt = max(spikeOutcomes.map((x) => x.endAt));
  const cpu = process.cpuUsage(cpu0);
  const server1 = pids.map(cpuMs);
  const machine1 = cpuSnapshot();
  const window = now() - spikeAt;
  const serverCpu = server1.reduce((sum, v, i) => sum + (Number.isFinite(v) ? v - (server0[i] ?? 0) : 0), 0);
  // /proc/stat counts in ticks of 10 ms; the harness's and the server's CPU are not "other" load
  const busyMs = (machine1.busy - machine0.busy) * 10;
  const noise = Math.max(0, busyMs - (cpu.user + cpu.system) / 1000 - serverCpu) / (window * CPUS);
  const recoveryMs = await recovery(server.port, settledAt);
  const drainMs = await quiet(server);
  // measured again once the server is idle: when the machine's other load changed meanwhile, the two differ
  const capacityAfter = await measureCapacityOf(server, mode);
  const ids = new Set(spikeOutcomes.map((x) => x.id));
  const lines = new Map<string, ResponseLine>();
  for (const line of server.responseLines()) if (ids.has(line.requestId)) lines.set(line.requestId, line);
  return {
    contender,
    mode,
    multiplier,
    capacity,
    capacityAfter,
    rate,
    seconds: (load.stoppedAt - spikeAt) / 1000,
    outcomes: spikeOutcomes,
    health,
    lines,
    settledAt,
    recoveryMs,
    harnessCpu: ((cpu.user + cpu.system) / 1000 / window) * 100,
    serverCpu: (serverCpu / window) * 100,
    primaryCpu: (((server1[0] ?? Number.NaN) - (server0[0] ?? Number.NaN)) / window) * 100,
    connectionsOpened: load.connectionsOpened,
    peakConnections: load.peakConnections,
    drainMs,
    noise: noise * 100,
  };
}

let spikeCounter = 0;
const CPUS = machineLoad().cpus;

/** New-connection requests every 100 ms from `from` until `RECOVERY_RUN` in a row are answered within `RECOVERY_FAST_MS`. */
async function recovery(port: number, from: number): Promise<number | undefined> {
  const sent: { done: FreshOutcome | undefined }[] = [];
  const fast = (x: FreshOutcome | undefined) => x !== undefined && x.kind === 'ok' && x.endAt - x.startAt <= RECOVERY_FAST_MS;
  const pending = new Set<Promise<void>>();
  try {
    while (now() - from < RECOVERY_CAP_MS) {
      const slot: { done: FreshOutcome | undefined } = { done: undefined };
      sent.push(slot);
      const one = freshRequest(port, PATH, CLIENT_TIMEOUT_MS).then((x) => {
        slot.done = x;
      });
      pending.add(one);
      void one.finally(() => pending.delete(one));
      await sleep(100);
      for (let i = 0; i + RECOVERY_RUN <= sent.length; i++) {
        if (sent.slice(i, i + RECOVERY_RUN).every((s) => fast(s.done))) return (sent[i]?.done?.endAt as number) - from;
      }
    }
    return undefined;
  } finally {
    await Promise.all(pending);
  }
}

/** Waits until the server has written no response line for 1 s (at most 30 s): what it still computed after recovery. */
async function quiet(server: Server): Promise<number> {
  const start = now();
  let count = server.lineCount();
  let since = now();
  while (now() - since < 1_000 && now() - start < 30_000) {
    await sleep(100);
    const next = server.lineCount();
    if (next !== count) {
      count = next;
      since = now();
    }
  }
  return since - start;
}

function figures(s: Spike): Figures {
  const answered = s.outcomes.filter((x) => x.kind === 'answered');
  const ok = answered.filter((x) => x.status >= 200 && x.status < 300);
  const shed = answered.filter((x) => x.status === 503);
  const otherStatus = new Map<number, number>();
  for (const x of answered) {
    if ((x.status < 200 || x.status >= 300) && x.status !== 503) otherStatus.set(x.status, (otherStatus.get(x.status) ?? 0) + 1);
  }
  const latency = (x: { startAt: number; endAt: number }) => x.endAt - x.startAt;
  const timeouts = s.outcomes.filter((x) => x.kind === 'timeout');
  const byId = new Map(s.outcomes.map((x) => [x.id, x]));
  let completed = 0;
  let completedGone = 0;
  let shedGone = 0;
  let serverShed = 0;
  for (const line of s.lines.values()) {
    const client = byId.get(line.requestId);
    // gone: the client had timed out and destroyed its socket before the server wrote its line (ms resolution)
    const gone = client !== undefined && client.kind === 'timeout' && line.at >= Math.floor(client.endAt);
    if (line.status >= 200 && line.status < 300) {
      completed++;
      if (gone) completedGone++;
    } else if (line.status === 503) {
      serverShed++;
      if (gone) shedGone++;
    }
  }
  return {
    sent: s.outcomes.length,
    ok: ok.length,
    goodput: ok.length / s.seconds / s.capacity,
    okP99: percentile(ok.map(latency), 99),
    okP50: percentile(ok.map(latency), 50),
    shed: shed.length,
    shedWithRetryAfter: shed.filter((x) => x.retryAfter !== undefined).length,
    shedP99: percentile(shed.map(latency), 99),
    otherStatus,
    timeouts: timeouts.length,
    neverSent: timeouts.filter((x) => x.sentAt === undefined).length,
    resets: s.outcomes.filter((x) => x.kind === 'reset').length,
    refused: s.outcomes.filter((x) => x.kind === 'refused').length,
    closed: s.outcomes.filter((x) => x.kind === 'closed').length,
    errors: s.outcomes.filter((x) => x.kind === 'error').length,
    // a failed probe counts as infinitely slow
    healthP99: percentile(
      s.health.map((h) => (h.status === 200 ? h.endAt - h.sentAt : Number.POSITIVE_INFINITY)),
      99,
    ),
    healthFailed: s.health.filter((h) => h.status !== 200).length,
    completed,
    completedGone,
    shedGone,
    serverShed,
    unseen: s.outcomes.filter((x) => !s.lines.has(x.id)).length,
  };
}

const drifted = (s: Spike) => Math.abs(s.capacityAfter / s.capacity - 1) > DRIFT;
const ms = (v: number) => (v === Number.POSITIVE_INFINITY ? '∞' : Number.isFinite(v) ? `${fmt(v)} ms` : 'n/a');
const pct = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${fmt((part / whole) * 100, 1)} %`);
const recoveryText = (s: Spike) => (s.recoveryMs === undefined ? `> ${RECOVERY_CAP_MS / 1000} s` : ms(s.recoveryMs));

function shedText(f: Figures): string {
  if (f.shed === 0) return 'none sent';
  return `p99 ${ms(f.shedP99)}, ${f.shedWithRetryAfter} of ${f.shed} with Retry-After`;
}

function judgedRows(name: string, s: Spike, f: Figures): Row[] {
  const at = `${s.multiplier}× capacity`;
  return [
    judged(
      name,
      `${at}: goodput (2xx within ${CLIENT_TIMEOUT_MS / 1000} s / capacity)`,
      `${fmt(f.goodput, 2)} (${fmt(f.ok / s.seconds)} of ${fmt(s.capacity)} req/s; offered ${fmt(s.rate)} req/s)${drifted(s) ? `; capacity after the spike ${fmt(s.capacityAfter)} req/s: the machine's load changed, rerun` : ''}`,
      `>= ${TARGETS.goodput}`,
      f.goodput >= TARGETS.goodput,
    ),
    judged(
      name,
      `${at}: latency p99 of the 2xx`,
      `${ms(f.okP99)} (p50 ${ms(f.okP50)})`,
      `<= ${TARGETS.okP99Ms} ms`,
      f.okP99 <= TARGETS.okP99Ms,
    ),
    judged(
      name,
      `${at}: 503s: latency p99, Retry-After`,
      shedText(f),
      `<= ${TARGETS.shedP99Ms} ms, all with Retry-After`,
      f.shed > 0 && f.shedP99 <= TARGETS.shedP99Ms && f.shedWithRetryAfter === f.shed,
    ),
    judged(
      name,
      `${at}: /health every 1 s on a new connection: p99 / failed`,
      `${ms(f.healthP99)} / ${f.healthFailed} of ${s.health.length}`,
      `<= ${TARGETS.healthP99Ms} ms / 0`,
      f.healthP99 <= TARGETS.healthP99Ms && f.healthFailed === 0,
    ),
    judged(
      name,
      `${at}: 2xx computed for clients already gone (server's lines)`,
      `${f.completedGone} of ${f.completed} (${pct(f.completedGone, f.completed)})`,
      `<= ${TARGETS.goneShare * 100} %`,
      f.completed > 0 && f.completedGone / f.completed <= TARGETS.goneShare,
    ),
    judged(
      name,
      `${at}: recovery: last request settled → new connections answered within ${RECOVERY_FAST_MS} ms`,
      recoveryText(s),
      `<= ${TARGETS.recoveryMs} ms`,
      s.recoveryMs !== undefined && s.recoveryMs <= TARGETS.recoveryMs,
    ),
  ];
}

/** The judged figures in one cell. */
function summary(s: Spike, f: Figures): string {
  return (
    `goodput ${fmt(f.goodput, 2)}; 2xx p99 ${ms(f.okP99)}; 503 ${shedText(f)}; /health p99 ${ms(f.healthP99)}, ${f.healthFailed} of ${s.health.length} failed; ` +
    `computed for gone clients ${f.completedGone} of ${f.completed} (${pct(f.completedGone, f.completed)}); recovery ${recoveryText(s)}`
  );
}

function counts(s: Spike, f: Figures): string {
  const other = [...f.otherStatus].map(([status, n]) => `${n} × ${status}`).join(', ');
  return (
    `${f.sent} sent: ${f.ok} 2xx, ${f.shed} 503${other === '' ? '' : `, ${other}`}, ${f.timeouts} timed out` +
    `${f.neverSent > 0 ? ` (${f.neverSent} never written: no connection within the timeout${s.mode === 'keep-alive' ? ", or in the client's queue" : ''})` : ''}, ${f.resets} reset, ${f.refused} refused, ${f.closed} closed` +
    `${f.errors > 0 ? `, ${f.errors} other errors` : ''}; server: ${f.serverShed} 503s logged (${f.shedGone} to gone clients), ${f.unseen} never logged; ` +
    `${s.connectionsOpened} connections opened (at most ${s.peakConnections} at once); ` +
    `harness CPU ${fmt(s.harnessCpu)} % of a CPU, server ${fmt(s.serverCpu)} % (primary ${fmt(s.primaryCpu)} %); ` +
    `other processes ${fmt(s.noise)} % of the ${CPUS} CPUs`
  );
}

/** One Markdown table per mode and multiplier: the contenders side by side. */
function comparisonTables(
  spikes: readonly Spike[],
  modes: readonly OverloadMode[],
  multipliers: readonly number[],
  contenders: readonly OverloadContender[],
): string[] {
  const tables: string[] = [];
  for (const mode of modes) {
    for (const multiplier of multipliers) {
      const runs = contenders.map((c) => spikes.find((s) => s.contender === c && s.mode === mode && s.multiplier === multiplier));
      if (runs.every((r) => r === undefined)) continue;
      const fs = runs.map((r) => (r === undefined ? undefined : figures(r)));
      const row = (label: string, target: string, cell: (s: Spike, f: Figures) => string) =>
        `| ${label} | ${target} | ${runs.map((r, i) => (r === undefined ? '—' : cell(r, fs[i] as Figures))).join(' | ')} |`;
      tables.push(
        [
          `**${MODE_LABELS[mode]}, ${multiplier}× capacity**`,
          '',
          `| figure | target | ${contenders.map((c) => LABELS[c]).join(' | ')} |`,
          `|---|---|${contenders.map(() => '---').join('|')}|`,
          row(
            'capacity before / after the spike; offered',
            '',
            (s) => `${fmt(s.capacity)} / ${fmt(s.capacityAfter)}; ${fmt(s.rate)} req/s`,
          ),
          row('goodput', `>= ${TARGETS.goodput}`, (_, f) => fmt(f.goodput, 2)),
          row('2xx latency p50 / p99', `p99 <= ${TARGETS.okP99Ms} ms`, (_, f) => `${ms(f.okP50)} / ${ms(f.okP99)}`),
          row('503s: count, p99, with Retry-After', `p99 <= ${TARGETS.shedP99Ms} ms, all`, (_, f) =>
            f.shed === 0 ? '0' : `${f.shed}, ${ms(f.shedP99)}, ${f.shedWithRetryAfter}`,
          ),
          row(
            '/health p99, failed',
            `<= ${TARGETS.healthP99Ms} ms, 0`,
            (s, f) => `${ms(f.healthP99)}, ${f.healthFailed} of ${s.health.length}`,
          ),
          row(
            '2xx computed for gone clients',
            `<= ${TARGETS.goneShare * 100} %`,
            (_, f) => `${f.completedGone} of ${f.completed} (${pct(f.completedGone, f.completed)})`,
          ),
          row('recovery', `<= ${TARGETS.recoveryMs} ms`, (s) => recoveryText(s)),
          row(
            'timed out (never sent) / reset / refused / closed',
            '',
            (_, f) => `${f.timeouts} (${f.neverSent}) / ${f.resets} / ${f.refused} / ${f.closed}`,
          ),
          row('connections opened (most at once)', '', (s) => `${s.connectionsOpened} (${s.peakConnections})`),
          row('request lines still coming after recovery (written in batches of up to 100 ms)', '', (s) => ms(s.drainMs)),
          row(
            'CPU: harness / server (primary), % of a CPU; other processes, % of the machine',
            '',
            (s) => `${fmt(s.harnessCpu)} / ${fmt(s.serverCpu)} (${fmt(s.primaryCpu)}); ${fmt(s.noise)}`,
          ),
        ].join('\n'),
      );
    }
  }
  return tables;
}

// ---------------------------------------------------------------------------------------------------------------
// the contenders

async function startServer(runtime: Runtime, contender: OverloadContender): Promise<Server> {
  if (contender === 'flotilla-primary' || contender === 'flotilla-kernel') {
    const cluster = new Cluster({
      runtime,
      config: { cluster: { balancing: contender === 'flotilla-primary' ? 'primary' : 'kernel' } },
      keepRequestLines: true,
    });
    try {
      await cluster.ready();
    } catch (error) {
      cluster.dispose();
      throw error;
    }
    return {
      port: cluster.appPort,
      // the primary first, then every worker seen so far (replacements included)
      pids: () => cluster.pids(),
      lineCount: () => cluster.requestLineCount + cluster.lines.length,
      responseLines: () => [...cluster.requestLines(), ...cluster.lines.filter((l) => l.msg === 'request aborted')].flatMap(responseLine),
      stop: async () => {
        await cluster.stop();
      },
      dispose: () => cluster.dispose(),
      tail: () => cluster.tail(),
    };
  }
  const fastify = new FastifyCluster(contender === 'fastify-under-pressure');
  try {
    await fastify.start();
  } catch (error) {
    fastify.kill();
    throw error;
  }
  return fastify;
}

function responseLine(line: LogLine): ResponseLine[] {
  const requestId = line['requestId'];
  const status = line['status'];
  if (typeof requestId !== 'string' || typeof status !== 'number') return [];
  return [{ requestId, status, at: line.at, aborted: line['aborted'] === true }];
}

/** `reliability/contenders/fastify-cluster.ts` in its own process group (via `ClusterProcess`), its response lines kept raw. */
class FastifyCluster extends ClusterProcess implements Server {
  port = 0;
  readonly #raw: string[] = [];
  #pids: number[] = [];

  constructor(underPressure: boolean) {
    super({
      cli: join(ROOT, 'reliability/contenders/fastify-cluster.ts'),
      // the contender reads no config: ClusterProcess passes `start --config <file>`, which it ignores
      configFile: '-',
      env: { RELIABILITY_WORKERS: '2', RELIABILITY_UNDER_PRESSURE: underPressure ? '1' : '0' },
    });
  }

  async start(): Promise<void> {
    const up = await this.waitForCount(byMsg('worker listening'), 2, 'worker listening', 20_000);
    for (const line of up) this.workers.set(line['slot'] as number, line['workerPid'] as number);
    const address = up[0]?.['address'] as { port: number } | undefined;
    if (address === undefined) throw new Error(`no listening address in the worker lines${this.tail()}`);
    this.port = address.port;
    this.#pids = [this.pid, ...this.workers.values()];
  }

  pids(): number[] {
    return this.#pids;
  }

  lineCount(): number {
    return this.#raw.length;
  }

  responseLines(): ResponseLine[] {
    return this.#raw.map(parseLine).flatMap(responseLine);
  }

  async stop(): Promise<void> {
    if (isAlive(this.pid)) this.signal('SIGTERM');
    if ((await within(this.exited, 15_000)) === undefined) this.kill();
    await whenGone(this.#pids, 2_000);
  }

  dispose(): void {
    this.kill();
  }

  protected override onLine(text: string): void {
    if (text.includes('"msg":"request completed"') || text.includes('"msg":"request aborted"')) {
      this.#raw.push(text);
      return;
    }
    super.onLine(text);
  }
}
