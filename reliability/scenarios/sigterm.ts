import { now, sleep, within } from '../lib/clock.ts';
import { byMsg, Cluster, type Exit } from '../lib/cluster.ts';
import { type Context, type ScenarioOutcome, steadyRate } from '../lib/context.ts';
import { Load, type Outcome } from '../lib/load.ts';
import { type ProbeResult, probeOnce } from '../lib/probe.ts';
import { listeningPorts, whenGone } from '../lib/proc.ts';
import { info, judged, type Row } from '../lib/report.ts';
import { openIdleSockets } from '../lib/sockets.ts';
import { fmt, max } from '../lib/stats.ts';

const NAME = 'SIGTERM under load';
const BUDGET_NAME = 'SIGTERM, budget spent';
const CONNECTIONS = 16;
const IDLE_SOCKETS = 8;
const SLOW_REQUESTS = 4;
const SLOW_MS = 2_000;
const TREE_TARGET_MS = 10_500;
const IDLE_TARGET_MS = 100;
const RUNS = 3;

/**
 * Two shutdowns of a 2-worker cluster by SIGTERM to the primary (as a
 * container runtime sends it):
 *
 * 1. (3 runs) under steady keep-alive load (1 request in 4 takes 25 ms, so
 *    that many are in flight), with 8 idle keep-alive sockets and 4 requests
 *    in their handler for 2 s: nothing written before the signal may fail, the
 *    tree exits within 10.5 s, idle sockets are closed within 100 ms;
 * 2. with a shutdown hook that never resolves and a request that outlasts the
 *    budget: the tree still exits within 10.5 s.
 */
export async function sigterm(ctx: Context): Promise<ScenarioOutcome> {
  const main = await underLoad(ctx);
  const budget = await budgetSpent(ctx);
  return { rows: [...main.rows, ...budget.rows], notes: [...main.notes, ...budget.notes] };
}

interface LoadRun {
  sentBefore: number;
  inFlight: number;
  failedBefore: number;
  after: Outcome[];
  treeMs: number;
  exitCode: number | null | undefined;
  idleMs: number[];
  idleFromStart: number[];
  idleClosed: number;
  relayMs: number[];
  stillListening: number[];
  notes: string[];
}

async function underLoad(ctx: Context): Promise<ScenarioOutcome> {
  const rate = steadyRate(ctx);
  const runs: LoadRun[] = [];
  for (let r = 0; r < RUNS; r++) {
    const run = await oneLoadRun(ctx, rate);
    runs.push(run);
    ctx.log(
      `SIGTERM run ${r + 1}/${RUNS}: ${run.failedBefore} of ${run.sentBefore} written before the signal failed; tree exited after ${fmt(run.treeMs)} ms; ` +
        `idle sockets closed after ${fmt(max(run.idleMs), 1)} ms`,
    );
  }
  const sum = (f: (r: LoadRun) => number) => runs.reduce((s, r) => s + f(r), 0);
  const failed = sum((r) => r.failedBefore);
  const treeMs = max(runs.map((r) => r.treeMs));
  const idleMs = max(runs.flatMap((r) => r.idleMs));
  const codes = runs.map((r) => r.exitCode);
  const listening = runs.flatMap((r) => r.stillListening);
  const rows: Row[] = [
    info(
      NAME,
      'runs × load at the signal',
      `${RUNS} × ${rate} req/s over ${CONNECTIONS} keep-alive connections (1 in 4 requests takes 25 ms), ${IDLE_SOCKETS} idle keep-alive sockets, ${SLOW_REQUESTS} requests of ${SLOW_MS} ms in their handler`,
    ),
    judged(
      NAME,
      'failed among the requests written before the signal (all runs)',
      `${failed} of ${sum((r) => r.sentBefore)} (${sum((r) => r.inFlight)} in flight at the signals)`,
      '0',
      failed === 0,
    ),
    info(NAME, 'requests sent after the signal (refused or closed, as they may be)', describeAfter(runs.flatMap((r) => r.after))),
    judged(
      NAME,
      'signal → whole tree exited, max',
      `${fmt(treeMs)} ms (runs: ${runs.map((r) => fmt(r.treeMs)).join(', ')})`,
      `<= ${TREE_TARGET_MS} ms`,
      treeMs <= TREE_TARGET_MS,
    ),
    judged(
      NAME,
      'primary exit code after a clean shutdown',
      codes.join(', '),
      '0',
      codes.every((c) => c === 0),
    ),
    judged(
      NAME,
      'idle keep-alive sockets closed after the signal, max',
      `${fmt(idleMs, 1)} ms (${sum((r) => r.idleClosed)}/${RUNS * IDLE_SOCKETS} closed; from each worker's own shutdown start: max ${fmt(
        max(runs.flatMap((r) => r.idleFromStart)),
        1,
      )} ms)`,
      `<= ${IDLE_TARGET_MS} ms`,
      idleMs <= IDLE_TARGET_MS,
    ),
    info(NAME, 'signal → workers start their shutdown (relay over IPC, log), max', `${fmt(max(runs.flatMap((r) => r.relayMs)))} ms`),
    judged(
      NAME,
      'listening ports left after the exit',
      listening.length === 0 ? 'none' : listening.join(', '),
      'none',
      listening.length === 0,
    ),
  ];
  return { rows, notes: runs.flatMap((r, i) => r.notes.map((n) => `run ${i + 1}: ${n}`)) };
}

async function oneLoadRun(ctx: Context, rate: number): Promise<LoadRun> {
  const cluster = new Cluster({ runtime: ctx.runtime, keepRequestLines: true });
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const pids = cluster.pids();
    const request = (i: number) => ({ path: i % 4 === 0 ? '/slow?ms=25' : '/who', planned: false });
    const load = new Load({ port, connections: CONNECTIONS, rate, request, timeoutMs: 12_000 }).start();
    const idle = await openIdleSockets(port, IDLE_SOCKETS);
    await sleep(1_500);
    const slow = Array.from({ length: SLOW_REQUESTS }, () => probeOnce(port, `/slow?ms=${SLOW_MS}`, 12_000));
    await sleep(300);

    const signalledAt = now();
    cluster.signal('SIGTERM');
    const gone = whenGone(pids, 15_000, 2);
    // keep the load on for a second: what is sent after the signal is reported, not judged
    await sleep(1_000);
    await load.stop();
    const slowResults = await Promise.all(slow);
    const exit = await within(cluster.exited, 15_000);
    const goneAt = await gone;
    const stillListening = [port, cluster.metricsPort].filter((p) => listeningPorts().has(p));
    for (const s of idle) s.socket.destroy();

    // what the server can have received before the signal is what undici had written to a socket by then
    const before = load.outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < signalledAt);
    const failedBefore = before.filter((o) => o.status !== 200);
    const slowFailed = slowResults.filter((r) => r.status !== 200);
    // the same, from each worker's own `worker shutting down` line (ms resolution)
    const startedBy = new Map(cluster.lines.filter(byMsg('worker shutting down')).map((l) => [l.pid as number, l.at]));
    const notes: string[] = [];
    if (failedBefore.length > 0) notes.push(...describeFailures(cluster, failedBefore, signalledAt));
    for (const r of slowFailed) notes.push(`a ${SLOW_MS} ms request in flight at the signal failed: ${r.error ?? `status ${r.status}`}`);
    if (exit?.code !== 0) notes.push(`exit: ${JSON.stringify(exit)}${cluster.tail(10)}`);
    return {
      sentBefore: before.length + slowResults.length,
      inFlight: before.filter((o) => o.endAt >= signalledAt).length + slowResults.length,
      failedBefore: failedBefore.length + slowFailed.length,
      after: load.outcomes.filter((o) => o.writtenAt === undefined || o.writtenAt >= signalledAt),
      treeMs: exit === undefined || goneAt === undefined ? Number.POSITIVE_INFINITY : Math.max(exit.at, goneAt) - signalledAt,
      exitCode: exit?.code,
      idleMs: idle.map((s) => (s.closedAt ?? Number.POSITIVE_INFINITY) - signalledAt),
      idleFromStart: idle.map((s) => (s.closedAt ?? Number.POSITIVE_INFINITY) - (startedBy.get(s.pid ?? 0) ?? Number.NaN)),
      idleClosed: idle.filter((s) => s.closedAt !== undefined).length,
      relayMs: [...startedBy.values()].map((at) => at - signalledAt),
      stillListening,
      notes,
    };
  } finally {
    cluster.dispose();
  }
}

async function budgetSpent(ctx: Context): Promise<ScenarioOutcome> {
  const cluster = new Cluster({ runtime: ctx.runtime, env: { RELIABILITY_HANG_HOOK: '1' } });
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const pids = cluster.pids();
    const idle = await openIdleSockets(port, 4);
    const stuck: Promise<ProbeResult> = probeOnce(port, '/slow?ms=30000', 20_000);
    await sleep(300);
    const signalledAt = now();
    cluster.signal('SIGTERM');
    const gone = whenGone(pids, 20_000, 2);
    const exit: Exit | undefined = await within(cluster.exited, 20_000);
    const goneAt = await gone;
    const stuckResult = await stuck;
    for (const s of idle) s.socket.destroy();
    const treeMs = exit === undefined || goneAt === undefined ? Number.POSITIVE_INFINITY : Math.max(exit.at, goneAt) - signalledAt;
    const idleMs = idle.map((s) => (s.closedAt ?? Number.POSITIVE_INFINITY) - signalledAt);
    const killed = cluster.lines.find(byMsg('primary shutdown: kill'));
    return {
      rows: [
        info(BUDGET_NAME, 'set-up', 'a worker shutdown hook that never resolves + a 30 s request in flight'),
        judged(
          BUDGET_NAME,
          'signal → whole tree exited',
          `${fmt(treeMs)} ms (exit code ${exit?.code ?? 'none'})`,
          `<= ${TREE_TARGET_MS} ms`,
          treeMs <= TREE_TARGET_MS,
        ),
        info(
          BUDGET_NAME,
          'the 30 s request / idle sockets closed after the signal, max / workers SIGKILLed by the primary',
          `${stuckResult.error ?? `status ${stuckResult.status}`} after ${fmt(stuckResult.endAt - signalledAt)} ms / ${fmt(max(idleMs), 1)} ms / ${
            (killed?.['workers'] as number | undefined) ?? 0
          }`,
        ),
      ],
      notes: [],
    };
  } finally {
    cluster.dispose();
  }
}

function describeAfter(after: readonly Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of after) {
    const key = o.status !== 0 ? `status ${o.status}` : (o.error?.split(':')[0] ?? 'error');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return `${after.length}: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ') || 'none'}`;
}

/** Evidence for each failed request sent before the signal: when, on which socket, and whether a worker logged it. */
function describeFailures(cluster: Cluster, failed: readonly Outcome[], signalledAt: number): string[] {
  const logged = new Map<string, Record<string, unknown>>();
  for (const line of [...cluster.requestLines(), ...cluster.lines.filter(byMsg('request aborted'))]) {
    if (typeof line['requestId'] === 'string') logged.set(line['requestId'], line);
  }
  return failed.slice(0, 10).map((o) => {
    const line = logged.get(o.requestId);
    return (
      `request ${o.requestId} written ${fmt(signalledAt - (o.writtenAt ?? Number.NaN), 2)} ms before the signal on a connection bound to ${o.boundPid ?? 'no worker yet'} ` +
      `failed after ${fmt(o.endAt - o.sentAt, 1)} ms: ${o.error ?? `status ${o.status}`}; ` +
      (line === undefined ? 'no worker logged it (it never reached a handler)' : `the worker logged it: ${JSON.stringify(line)}`)
    );
  });
}
