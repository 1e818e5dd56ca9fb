import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Link } from './netns.ts';
import { Probe, type ProbeResult } from './probe.ts';
import { rssMb, tcpMemoryMb } from './proc.ts';
import { SendBufferSampler, type SendBuffers } from './send-buffers.ts';
import { slowClientsOver } from './slow-clients-child.ts';
import { type Attack, runSlowHttpTest, type SlowHttpTestReport } from './slowhttptest.ts';
import type { SlowKind, SlowResult } from './sockets.ts';
import { fmt, max, min, percentile } from './stats.ts';

export interface SlowAttackOptions {
  attack: Attack;
  /** Where the clients run and the server listens. */
  link: Link;
  port: number;
  /** The workers' pids, for their RSS. */
  workers: readonly number[];
  slowhttptest: { connections: number; rate: number; lengthS: number };
  /** Our own raw-socket clients (none when `count` is 0). */
  own: { kind: SlowKind; count: number; tickMs: number; maxMs: number; staggerMs: number };
  probe: { everyMs: number; timeoutMs: number };
}

export interface SlowAttackOutcome {
  report: SlowHttpTestReport;
  own: SlowResult[];
  probes: ProbeResult[];
  /** The workers' RSS summed, MB. */
  peakRssMb: number;
  /** The kernel's TCP memory (every socket of the machine), MB. */
  peakTcpMb: number;
  tcp: { pressureMb: number; limitMb: number };
  /** The server's side of the connections when the most bytes were queued (`ss`), if sampled. */
  sendBuffers: SendBuffers | undefined;
  /** This process's own event-loop delay, ms: the probe's latencies include it. */
  loopDelay: { p99: number; max: number };
}

/**
 * One slow-client attack: slowhttptest and our own raw-socket clients from the
 * clients' side of the link, while a probe asks `GET /who` on a new connection
 * (from this namespace) and the workers' RSS, the kernel's TCP memory and the
 * server-side send buffers are sampled.
 */
export async function slowAttack(o: SlowAttackOptions): Promise<SlowAttackOutcome> {
  const { link, port } = o;
  const probe = new Probe(port, '/who', o.probe.everyMs, o.probe.timeoutMs, link.serverHost);
  const buffers = new SendBufferSampler(port);
  const { pressure, limit } = tcpMemoryMb();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let peakRssMb = 0;
  let peakTcpMb = 0;
  const sampler = setInterval(() => {
    peakRssMb = Math.max(
      peakRssMb,
      o.workers.reduce((sum, pid) => sum + (rssMb(pid) ?? 0), 0),
    );
    peakTcpMb = Math.max(peakTcpMb, tcpMemoryMb().used);
  }, 250);
  try {
    const [report, own] = await Promise.all([
      runSlowHttpTest({ attack: o.attack, host: link.serverHost, port, commandPrefix: link.clientPrefix, ...o.slowhttptest }),
      o.own.count === 0
        ? Promise.resolve([])
        : slowClientsOver(link, port, o.own.kind, o.own.count, o.own.tickMs, o.own.maxMs, o.own.staggerMs),
    ]);
    return {
      report,
      own,
      probes: await probe.stop(),
      peakRssMb,
      peakTcpMb,
      tcp: { pressureMb: pressure, limitMb: limit },
      sendBuffers: await buffers.stop(),
      loopDelay: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
    };
  } finally {
    delay.disable();
    clearInterval(sampler);
    await Promise.all([probe.stop(), buffers.stop()]);
  }
}

/** A probe's latency; a failed probe counts as infinitely slow. */
export function latency(p: ProbeResult): number {
  return p.status === 200 ? p.endAt - p.sentAt : Number.POSITIVE_INFINITY;
}

/** p99 of the probes' latencies, a failed probe counting as infinitely slow. */
export function latencyP99(probes: readonly ProbeResult[]): number {
  return percentile(probes.map(latency), 99);
}

/**
 * The probes' latency distribution: percentiles, how many were slower than `targetMs`, why probes
 * failed, and how late this process's own event loop ran meanwhile (the probe's latencies include it).
 */
export function describeProbes(o: SlowAttackOutcome, targetMs: number): string {
  const { probes, loopDelay } = o;
  const ms = probes.map(latency);
  const errors = new Map<string, number>();
  for (const p of probes) {
    if (p.status !== 200) errors.set(p.error ?? `status ${p.status}`, (errors.get(p.error ?? `status ${p.status}`) ?? 0) + 1);
  }
  return (
    `probe latency p50 ${fmt(percentile(ms, 50), 1)}, p90 ${fmt(percentile(ms, 90), 1)}, p99 ${fmt(percentile(ms, 99), 1)} ms, ` +
    `${ms.filter((v) => v > targetMs).length} of ${ms.length} over ${targetMs} ms` +
    (errors.size === 0 ? '' : ` (failed: ${[...errors].map(([e, n]) => `${n} × ${e}`).join(', ')})`) +
    `; the probing process's own event-loop delay p99 ${fmt(loopDelay.p99)} ms, max ${fmt(loopDelay.max)} ms`
  );
}

/** When our clients were cut, from connecting. */
export function describeCuts(results: readonly SlowResult[]): string {
  const cuts = results.flatMap((r) => (r.cutAfterMs === undefined ? [] : [r.cutAfterMs]));
  const open = results.length - cuts.length;
  const range = cuts.length === 0 ? 'none cut' : `${fmt(min(cuts))}–${fmt(max(cuts))} ms (median ${fmt(percentile(cuts, 50))})`;
  return open === 0 ? range : `${range}, ${open} never cut`;
}

/** The server side's state of our slow readers once cut ('gone': reset, or closed and done with). */
export function describeStates(results: readonly SlowResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results) {
    if (r.cutAfterMs !== undefined) counts.set(r.serverState ?? 'gone', (counts.get(r.serverState ?? 'gone') ?? 0) + 1);
  }
  return [...counts].map(([state, n]) => `${n} ${state}`).join(', ') || 'none cut';
}

/** slowhttptest's figures, the workers' RSS, the kernel's TCP memory, and (`queues`) the server-side send queues. */
export function describeAttack(o: SlowAttackOutcome, queues: boolean): string {
  const r = o.report;
  return (
    `max ${r.maxConnected} connected at once, its probe unanswered ${r.unavailableSeconds} s of ${r.rows.length}; "${r.verdict}"; ` +
    `workers' RSS peak ${fmt(o.peakRssMb)} MB; kernel TCP memory peak ${fmt(o.peakTcpMb)} MB (limit tcp_mem[2] ${fmt(o.tcp.limitMb)} MB)` +
    (queues ? `; ${describeQueues(o.sendBuffers)}` : '')
  );
}

function describeQueues(b: SendBuffers | undefined): string {
  if (b === undefined || b.sockets === 0) return 'server send queues: not sampled';
  const kb = (bytes: number) => fmt(bytes / 1024);
  const total = b.queued.reduce((sum, v) => sum + v, 0);
  return (
    `server send queues (ss, fullest sample): ${b.sockets} sockets, median ${kb(percentile(b.queued, 50))} kB (max ${kb(max(b.queued))}), ` +
    `${fmt(total / 1024 / 1024)} MB in all; send buffer size median ${kb(percentile(b.sizes, 50))} kB`
  );
}
