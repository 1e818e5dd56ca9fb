import { sleep } from '../lib/clock.ts';
import { Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { type Link, loopbackLink, MTU, openLink } from '../lib/netns.ts';
import { Probe } from '../lib/probe.ts';
import { info, judged, type Row } from '../lib/report.ts';
import {
  describeAttack,
  describeCuts,
  describeProbes,
  describeStates,
  latency,
  latencyP99,
  type SlowAttackOutcome,
  slowAttack,
} from '../lib/slow-attack.ts';
import type { Attack } from '../lib/slowhttptest.ts';
import type { SlowKind } from '../lib/sockets.ts';
import { fmt, max } from '../lib/stats.ts';

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
 * `timeouts.socketMs: 3000`. Each attack is Debian's slowhttptest (1000
 * connections at 200/s, statistics on) plus 20 slow clients of our own on raw
 * sockets, whose cut time we measure exactly, while a probe opens a new
 * connection every 50 ms for `GET /who`. The attackers reach the cluster over a
 * veth pair with an Ethernet MTU (lib/netns.ts) when the harness can make one
 * (root, iproute2); the slow read then runs once more over loopback, for
 * information. Without the veth pair everything runs over loopback.
 */
export async function slowClients(ctx: Context): Promise<ScenarioOutcome> {
  const link = openLink();
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    ctx.log(`attackers over ${link.description}: ${link.clientHost} → ${link.serverHost}`);
    await judgedRun(ctx, link, rows, notes);
    if (link.kind === 'veth') await loopbackSlowRead(ctx, rows, notes);
    else
      notes.push(
        `The attackers ran over ${link.description}: the slow-read figures then say more about loopback than about flotilla (${LOOPBACK}).`,
      );
    return { rows, notes };
  } finally {
    link.close();
  }
}

/** The three attacks over `link`, judged against the targets. */
async function judgedRun(ctx: Context, link: Link, rows: Row[], notes: string[]): Promise<void> {
  const cluster = await startCluster(ctx, link);
  try {
    const baseline = new Probe(cluster.appPort, '/who', PROBE_EVERY_MS, 2_000, link.serverHost);
    await sleep(3_000);
    const quiet = await baseline.stop();
    rows.push(
      info(
        NAME,
        'set-up',
        `2 workers, timeouts.headersMs ${HEADERS_MS}, requestMs ${REQUEST_MS} (node checks them every ${CHECK_INTERVAL_MS} ms), ` +
          `socketMs ${SOCKET_MS}; probe: new connection every ${PROBE_EVERY_MS} ms; attackers over ${link.description}`,
      ),
      info(NAME, 'probe p99 without attack', `${fmt(latencyP99(quiet), 1)} ms (${quiet.length} probes)`),
    );
    for (const { attack, kind, timeoutKey, low, high } of ATTACKS) {
      const outcome = await runAttack(ctx, cluster, link, attack, kind);
      const { own, probes, peakTcpMb, tcp } = outcome;
      const failed = probes.filter((p) => p.status !== 200).length;
      const p99 = latencyP99(probes);
      const label = `${attack} (${kind === 'slow-headers' ? 'slow headers' : kind.replace('-', ' ')})`;
      if (p99 > PROBE_TARGET_MS || failed > 0 || peakTcpMb >= tcp.pressureMb) {
        notes.push(
          `${attack}: ${describeProbes(outcome, PROBE_TARGET_MS)}; the kernel's TCP memory peaked at ${fmt(peakTcpMb)} MB ` +
            `(memory pressure from tcp_mem[1] ${fmt(tcp.pressureMb)} MB, hard limit tcp_mem[2] ${fmt(tcp.limitMb)} MB)` +
            (peakTcpMb >= tcp.pressureMb
              ? ". The slow readers' server-side send queues put the kernel's TCP memory under pressure: from then on the kernel " +
                "shrinks send buffers and, at the hard limit, grants every socket of the machine no more than a minimum, the probe's included."
              : '.'),
        );
      }
      rows.push(
        judged(
          NAME,
          `${label}: probe latency p99 during the attack`,
          `${fmt(p99, 1)} ms (${probes.length} probes, ${failed} failed, max ${fmt(max(probes.map(latency)), 1)} ms)`,
          `<= ${PROBE_TARGET_MS} ms`,
          p99 <= PROBE_TARGET_MS && failed === 0,
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
      if (inWindow.length !== own.length) {
        notes.push(
          `${attack}: our clients' cut times in the order they connected (50 ms apart), ms: ` +
            own.map((r) => (r.cutAfterMs === undefined ? 'never' : fmt(r.cutAfterMs))).join(', ') +
            (kind === 'slow-read' ? ' (a slow reader sees its cut at the first of two agreeing polls, once a second for all of them)' : ''),
        );
      }
      if (kind === 'slow-read' && own.some((r) => r.serverState === 'FIN_WAIT1')) {
        notes.push(
          `${attack}: after the cut the server's side of a slow reader's socket stays FIN_WAIT1: closed with a FIN, not reset, so the ` +
            'kernel keeps its unsent data for as long as the client keeps its window shut, and the cut does not give the TCP memory back. ' +
            'A connection cut by `timeouts.socketMs` with a response unsent should be reset (`socket.resetAndDestroy()`).',
        );
      }
      rows.push(info(NAME, `${label}: slowhttptest`, describeAttack(outcome, kind === 'slow-read')));
      notes.push(`${attack}: \`${describeCommand(outcome, link, cluster.appPort)}\``);
      // let the service settle before the next attack
      await sleep(1_000);
    }
    await cluster.stop();
  } finally {
    cluster.dispose();
  }
}

/** The slow read once more, with the attackers on loopback beside the server: reported, not judged. */
async function loopbackSlowRead(ctx: Context, rows: Row[], notes: string[]): Promise<void> {
  const link = loopbackLink('127.0.0.1, MTU 65536');
  const cluster = await startCluster(ctx, link);
  try {
    const outcome = await runAttack(ctx, cluster, link, 'slow-read', 'slow-read');
    const { probes, peakTcpMb, tcp } = outcome;
    const p99 = latencyP99(probes);
    rows.push(
      info(
        NAME,
        'slow-read over loopback (127.0.0.1, MTU 65536), not judged',
        `probe p99 ${fmt(p99, 1)} ms (${probes.length} probes, ${probes.filter((p) => p.status !== 200).length} failed, ` +
          `max ${fmt(max(probes.map(latency)), 1)} ms); ${describeAttack(outcome, true)}`,
      ),
    );
    notes.push(
      `slow-read over loopback (not judged): ${describeProbes(outcome, PROBE_TARGET_MS)}; our clients cut after ${describeCuts(outcome.own)}; ` +
        `the kernel's TCP memory peaked at ${fmt(peakTcpMb)} MB (pressure from tcp_mem[1] ${fmt(tcp.pressureMb)} MB, hard limit ` +
        `tcp_mem[2] ${fmt(tcp.limitMb)} MB). Why this differs from the ${MTU}-byte link: ${LOOPBACK}. The targets are judged over ` +
        `the ${MTU}-byte link.`,
    );
    await cluster.stop();
  } finally {
    cluster.dispose();
  }
}

const LOOPBACK =
  `on \`lo\` (MTU 65536) the MSS is ~64 kB and Linux sizes each socket's send buffer from it: a slow reader's grows to ` +
  `tcp_wmem[2] (4 MiB) at once, where over a ${MTU}-byte MTU a reader with a small window holds ~70 kB. 1000 slow readers ` +
  "then take the kernel's TCP memory to its hard limit instead of ~100 MB. From there the kernel grants every socket of the " +
  'machine no more than a minimum (send buffers shrink, segments that need more are dropped and sent again): how much a probe ' +
  'suffers then depends on the moment and on how busy the machine is';

function startCluster(ctx: Context, link: Link): Promise<Cluster> {
  const cluster = new Cluster({
    runtime: ctx.runtime,
    config: { host: link.serverHost, timeouts: { headersMs: HEADERS_MS, requestMs: REQUEST_MS, socketMs: SOCKET_MS } },
  });
  return cluster.ready().catch((error: unknown) => {
    cluster.dispose();
    throw error;
  });
}

async function runAttack(ctx: Context, cluster: Cluster, link: Link, attack: Attack, kind: SlowKind): Promise<SlowAttackOutcome> {
  const over = link.kind === 'veth' ? `the ${MTU}-byte link` : 'loopback';
  ctx.log(
    `${attack} over ${over}: slowhttptest ${SLOWHTTPTEST.connections} connections at ${SLOWHTTPTEST.rate}/s + ${OWN_CLIENTS} raw-socket clients`,
  );
  const outcome = await slowAttack({
    attack,
    link,
    port: cluster.appPort,
    workers: [...cluster.workers.values()],
    slowhttptest: SLOWHTTPTEST,
    own: { kind, count: OWN_CLIENTS, tickMs: OWN_TICK_MS, maxMs: OWN_MAX_MS, staggerMs: 50 },
    probe: { everyMs: PROBE_EVERY_MS, timeoutMs: 2_000 },
  });
  const { probes } = outcome;
  ctx.log(
    `${attack} over ${over}: probe p99 ${fmt(latencyP99(probes), 1)} ms, ${probes.filter((p) => p.status !== 200).length} failed; ` +
      `own clients cut after ${describeCuts(outcome.own)}; kernel TCP memory peak ${fmt(outcome.peakTcpMb)} MB`,
  );
  return outcome;
}

/** slowhttptest's command line, without the report prefix, port and veth address (they change from run to run). */
function describeCommand(o: SlowAttackOutcome, link: Link, port: number): string {
  const command = o.report.command.replace(`${link.serverHost}:${port}/`, `${link.kind === 'veth' ? '<server>' : link.serverHost}:<port>/`);
  return link.kind === 'veth' ? `ip netns exec <clients> ${command}` : command;
}
