import { sleep } from '../lib/clock.ts';
import { Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { Probe, type ProbeResult } from '../lib/probe.ts';
import { rssMb, tcpMemoryMb } from '../lib/proc.ts';
import { info, judged, type Row } from '../lib/report.ts';
import { type Attack, runSlowHttpTest } from '../lib/slowhttptest.ts';
import { slowClients as runSlowClients, type SlowKind, type SlowResult } from '../lib/sockets.ts';
import { fmt, max, min, percentile } from '../lib/stats.ts';

const NAME = 'slow clients';
const HEADERS_MS = 2_000;
const REQUEST_MS = 5_000;
/** `timeouts.socketMs`: no traffic either way this long while a response is pending cuts the connection. */
const SOCKET_MS = 3_000;
/** How often our slow readers ask the kernel whether the server closed its side (lib/sockets.ts). */
const POLL_MS = 1_000;
/** node:http checks its timeouts every `connectionsCheckingInterval`; flotilla sets it to min(2000, headersMs). */
const CHECK_INTERVAL_MS = Math.min(2_000, HEADERS_MS);
/** Scheduling slack on top of the checking interval. */
const SLACK_MS = 250;
const PROBE_EVERY_MS = 50;
const PROBE_TARGET_MS = 100;
const OWN_CLIENTS = 20;
const OWN_TICK_MS = 250;
const OWN_MAX_MS = 15_000;
const SLOWHTTPTEST = { connections: 1_000, rate: 200, lengthS: 15 };

/** Each attack, the timeout that must cut it, and the window in which the cut is expected (ms after connecting). */
const ATTACKS: { attack: Attack; kind: SlowKind; timeoutKey: string; low: number; high: number }[] = [
  // node:http checks headersTimeout and requestTimeout every connectionsCheckingInterval: up to one interval late
  {
    attack: 'slowloris',
    kind: 'slow-headers',
    timeoutKey: `timeouts.headersMs ${HEADERS_MS}`,
    low: HEADERS_MS,
    high: HEADERS_MS + CHECK_INTERVAL_MS + SLACK_MS,
  },
  {
    attack: 'slow-body',
    kind: 'slow-body',
    timeoutKey: `timeouts.requestMs ${REQUEST_MS}`,
    low: REQUEST_MS,
    high: REQUEST_MS + CHECK_INTERVAL_MS + SLACK_MS,
  },
  // node's socket inactivity timer is re-armed once if the kernel took data since the write, so up to 2 × socketMs; plus our polling
  {
    attack: 'slow-read',
    kind: 'slow-read',
    timeoutKey: `timeouts.socketMs ${SOCKET_MS}`,
    low: SOCKET_MS,
    high: 2 * SOCKET_MS + POLL_MS + SLACK_MS,
  },
];

/**
 * Slowloris, slow body and slow read against a 2-worker cluster configured
 * with `timeouts.headersMs: 2000`, `timeouts.requestMs: 5000` and
 * `timeouts.socketMs: 3000`. Each attack
 * is Debian's slowhttptest (1000 connections at 200/s, statistics on) plus 20
 * slow clients of our own on raw sockets, whose cut time we measure exactly,
 * while a probe opens a new connection every 50 ms for `GET /who`.
 */
export async function slowClients(ctx: Context): Promise<ScenarioOutcome> {
  const cluster = new Cluster({
    runtime: ctx.runtime,
    config: { timeouts: { headersMs: HEADERS_MS, requestMs: REQUEST_MS, socketMs: SOCKET_MS } },
  });
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const workers = [...cluster.workers.values()];
    const baseline = new Probe(port, '/who', PROBE_EVERY_MS, 2_000);
    await sleep(3_000);
    const quiet = await baseline.stop();
    rows.push(
      info(
        NAME,
        'set-up',
        `2 workers, timeouts.headersMs ${HEADERS_MS}, requestMs ${REQUEST_MS} (node checks them every ${CHECK_INTERVAL_MS} ms), socketMs ${SOCKET_MS}; probe: new connection every ${PROBE_EVERY_MS} ms`,
      ),
      info(NAME, 'probe p99 without attack', `${fmt(latencyP99(quiet), 1)} ms (${quiet.length} probes)`),
    );

    for (const { attack, kind, timeoutKey, low, high } of ATTACKS) {
      ctx.log(
        `${attack}: slowhttptest ${SLOWHTTPTEST.connections} connections at ${SLOWHTTPTEST.rate}/s + ${OWN_CLIENTS} raw-socket clients`,
      );
      const probe = new Probe(port, '/who', PROBE_EVERY_MS, 2_000);
      let peakRss = 0;
      let peakTcp = 0;
      const tcpLimit = tcpMemoryMb().limit;
      const sampler = setInterval(() => {
        peakRss = Math.max(
          peakRss,
          workers.reduce((sum, pid) => sum + (rssMb(pid) ?? 0), 0),
        );
        peakTcp = Math.max(peakTcp, tcpMemoryMb().used);
      }, 250);
      const [report, own] = await Promise.all([
        runSlowHttpTest({ attack, port, ...SLOWHTTPTEST }),
        runSlowClients(port, kind, OWN_CLIENTS, OWN_TICK_MS, OWN_MAX_MS, 50),
      ]);
      clearInterval(sampler);
      const probes = await probe.stop();
      const failed = probes.filter((p) => p.status !== 200);
      const p99 = latencyP99(probes);
      ctx.log(`${attack}: probe p99 ${fmt(p99, 1)} ms, ${failed.length} failed; own clients cut after ${describeCuts(own)}`);
      const label = `${attack} (${kind === 'slow-headers' ? 'slow headers' : kind.replace('-', ' ')})`;
      const exhausted = peakTcp >= tcpLimit * 0.95;
      if (p99 > PROBE_TARGET_MS || failed.length > 0 || exhausted) {
        const errors = new Map<string, number>();
        for (const p of failed) errors.set(p.error ?? `status ${p.status}`, (errors.get(p.error ?? `status ${p.status}`) ?? 0) + 1);
        notes.push(
          `${attack}: probe p99 ${fmt(p99, 1)} ms (target ${PROBE_TARGET_MS}), ${failed.length} of ${probes.length} probes failed` +
            (errors.size === 0 ? '' : ` (${[...errors].map(([e, n]) => `${n} × ${e}`).join(', ')})`) +
            `; the kernel's TCP memory peaked at ${fmt(peakTcp)} MB for a hard limit (tcp_mem[2]) of ${fmt(tcpLimit)} MB` +
            (exhausted
              ? ". The slow readers' server-side send buffers (each socket's send buffer autotunes up to tcp_wmem[2], 4 MiB by default; a socket cut by " +
                '`timeouts.socketMs` keeps its send queue as a FIN_WAIT1 orphan while the client keeps its window shut) exhaust the TCP ' +
                "memory of the whole machine; from then on the kernel stalls every socket that needs memory, the probe's included, so how " +
                'long the probe waits varies from run to run.'
              : '.'),
        );
      }
      rows.push(
        judged(
          NAME,
          `${label}: probe latency p99 during the attack`,
          `${fmt(p99, 1)} ms (${probes.length} probes, ${failed.length} failed, max ${fmt(max(probes.map(latency)), 1)} ms)`,
          `<= ${PROBE_TARGET_MS} ms`,
          p99 <= PROBE_TARGET_MS && failed.length === 0,
        ),
      );
      const inWindow = own.filter((r) => r.cutAfterMs !== undefined && r.cutAfterMs >= low && r.cutAfterMs <= high);
      const how =
        kind === 'slow-read'
          ? `server side then ${describeStates(own)}`
          : `${own.filter((r) => r.statusLine?.includes(' 408 ')).length} answered 408`;
      rows.push(
        judged(
          NAME,
          `${label}: our ${OWN_CLIENTS} clients cut after (${timeoutKey})`,
          `${describeCuts(own)}; ${how}`,
          `${low}–${high} ms`,
          inWindow.length === own.length,
        ),
      );
      if (kind === 'slow-read' && own.some((r) => r.serverState === 'FIN_WAIT1')) {
        notes.push(
          `${attack}: after the cut the server's side of a slow reader's socket stays FIN_WAIT1: closed by the worker, but the kernel keeps ` +
            'its unsent data (up to tcp_wmem[2], 4 MiB) for as long as the client keeps its window shut, so the cut does not give the TCP ' +
            'memory back. Resetting such sockets (`socket.resetAndDestroy()`, an RST) when `timeouts.socketMs` fires would.',
        );
      }
      rows.push(
        info(
          NAME,
          `${label}: slowhttptest`,
          `max ${report.maxConnected} connected at once, its probe unanswered ${report.unavailableSeconds} s of ${report.rows.length}; ` +
            `"${report.verdict}"; workers' RSS peak ${fmt(peakRss)} MB; kernel TCP memory peak ${fmt(peakTcp)} MB (limit tcp_mem[2] ${fmt(tcpLimit)} MB)`,
        ),
      );
      notes.push(`${attack}: \`${report.command.replace(`:${port}/`, ':<port>/')}\``);
      // let the service settle before the next attack
      await sleep(1_000);
    }
    await cluster.stop();
    return { rows, notes };
  } finally {
    cluster.dispose();
  }
}

function latency(p: ProbeResult): number {
  return p.status === 200 ? p.endAt - p.sentAt : Number.POSITIVE_INFINITY;
}

/** p99 of the probes' latencies, a failed probe counting as infinitely slow. */
function latencyP99(probes: readonly ProbeResult[]): number {
  return percentile(probes.map(latency), 99);
}

function describeStates(results: readonly SlowResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results)
    if (r.cutAfterMs !== undefined) counts.set(r.serverState ?? 'gone', (counts.get(r.serverState ?? 'gone') ?? 0) + 1);
  return [...counts].map(([state, n]) => `${n} ${state}`).join(', ') || 'none cut';
}

function describeCuts(results: readonly SlowResult[]): string {
  const cuts = results.flatMap((r) => (r.cutAfterMs === undefined ? [] : [r.cutAfterMs]));
  const open = results.length - cuts.length;
  const range = cuts.length === 0 ? 'none cut' : `${fmt(min(cuts))}–${fmt(max(cuts))} ms (median ${fmt(percentile(cuts, 50))})`;
  return open === 0 ? range : `${range}, ${open} never cut`;
}
