import { isAlive } from '../../tools/proc.ts';
import { now, sleep } from '../lib/clock.ts';
import { byMsg, Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { Load } from '../lib/load.ts';
import { Probe, probeOnce } from '../lib/probe.ts';
import { whenGone } from '../lib/proc.ts';
import { info, judged } from '../lib/report.ts';
import { fmt, max, percentile } from '../lib/stats.ts';

const NAME = 'stuck worker';
const CONNECTIONS = 16;
const RATE = 1_000;
const PROBE_EVERY_MS = 10;
/** Longer than the watchdog's 10 s: a request stuck with the worker ends when the worker is killed, not at a client timeout. */
const CLIENT_TIMEOUT_MS = 15_000;
/** The framework's default `cluster.heartbeatTimeoutMs` (the scenario does not set it) and `heartbeatIntervalMs`. */
const HEARTBEAT_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1_000;
/** Target: the timeout, plus one heartbeat interval of granularity, plus a worker's start-up (1.5 s as in the kill scenario). */
const REPLACEMENT_TARGET_MS = HEARTBEAT_TIMEOUT_MS + HEARTBEAT_INTERVAL_MS + 1_500;

/**
 * One request sends a worker into `while (true) {}` under steady load (the
 * recording client on 16 keep-alive connections, and a new-connection probe
 * every 10 ms), with the framework's default watchdog (`heartbeatTimeoutMs`
 * 10 s): how long until the replacement listens, what the clients lost, and
 * whether the stuck process is gone.
 */
export async function stuckWorker(ctx: Context): Promise<ScenarioOutcome> {
  const cluster = new Cluster({ runtime: ctx.runtime, config: { logging: { requests: false } } });
  const notes: string[] = [];
  try {
    await cluster.ready();
    const port = cluster.appPort;
    const first = new Set(cluster.workers.values());
    const load = new Load({
      port,
      connections: CONNECTIONS,
      rate: RATE,
      request: () => ({ path: '/who', planned: false }),
      timeoutMs: CLIENT_TIMEOUT_MS,
    }).start();
    const probe = new Probe(port, '/who', PROBE_EVERY_MS, CLIENT_TIMEOUT_MS);
    await sleep(2_000);

    const hangAt = now();
    const hang = probeOnce(port, '/hang', 30_000);
    const blocked = await cluster.waitFor(
      byMsg('event loop blocked: the JavaScript stack of the main thread'),
      "the stuck worker's stack line",
      HEARTBEAT_TIMEOUT_MS + 5_000,
    );
    const stuck = blocked.pid as number;
    const healthy = [...first].find((pid) => pid !== stuck) as number;
    const found = await cluster.waitFor(
      byMsg('worker stopped answering heartbeats (event loop stuck): starting a replacement, then killing it', { workerPid: stuck }),
      'the watchdog',
      HEARTBEAT_TIMEOUT_MS + 10_000,
    );
    const up = await cluster.waitFor(
      (l) => l.msg === 'worker listening' && !first.has(l['workerPid'] as number),
      'the replacement listening',
      15_000,
    );
    const goneAt = await whenGone([stuck], 5_000);
    await sleep(2_000);
    await load.stop();
    const probes = await probe.stop();
    const hung = await hang;
    const exitLine = cluster.lines.find(
      (l) => l['workerPid'] === stuck && (l.msg === 'worker retired' || l.msg?.startsWith('worker exit')),
    );
    await cluster.stop();

    // keep-alive load: a request's worker is known from its socket (bound to the pid that answered the previous one)
    const outcomes = load.outcomes;
    const failed = outcomes.filter((o) => o.status !== 200);
    const toHealthy = outcomes.filter((o) => o.boundPid === healthy || (o.boundPid === undefined && o.pid === healthy));
    const failedHealthy = failed.filter((o) => o.boundPid === healthy);
    const failedStuck = failed.filter((o) => o.boundPid === stuck);
    const failedNew = failed.filter((o) => o.boundPid === undefined);
    const stuckConnections = new Set(outcomes.filter((o) => o.pid === stuck && o.sentAt < hangAt).map((o) => o.conn));
    const failedProbes = probes.filter((p) => p.status !== 200);
    const sentDuring = (t: { sentAt: number }) => t.sentAt >= hangAt && t.sentAt <= up.at;
    const healthyDuring = outcomes.filter((o) => o.status === 200 && o.pid === healthy && sentDuring(o)).map((o) => o.endAt - o.sentAt);
    const probesDuring = probes.filter((p) => sentDuring(p) && p.status === 200).map((p) => p.endAt - p.sentAt);
    const all = outcomes.length + probes.length;
    const lost = failed.length + failedProbes.length;
    const describe = (list: readonly { sentAt: number; endAt: number; error: string | undefined; status: number }[]) =>
      list
        .slice(0, 8)
        .map(
          (o) => `sent ${fmt(o.sentAt - hangAt)} ms after the hang, ended ${fmt(o.endAt - hangAt)} ms: ${o.error ?? `status ${o.status}`}`,
        )
        .join('; ');
    if (failedProbes.length > 0) notes.push(`failed new-connection probes: ${describe(failedProbes)}`);
    if (failedNew.length > 0) notes.push(`failed load requests on new sockets: ${describe(failedNew)}`);
    if (failedHealthy.length > 0) notes.push(`failed load requests on sockets bound to the healthy worker: ${describe(failedHealthy)}`);
    notes.push(
      `timeline from the \`GET /hang\`: stack logged by the stuck worker's watchdog thread after ${fmt(blocked.at - hangAt)} ms ` +
        `(blockedMs ${blocked['blockedMs']}); the primary declared it stuck after ${fmt(found.at - hangAt)} ms (silentMs ${found['silentMs']}); ` +
        `replacement listening after ${fmt(up.at - hangAt)} ms; stuck pid gone after ${goneAt === undefined ? 'never (5 s)' : `${fmt(goneAt - hangAt)} ms`}` +
        `${exitLine === undefined ? '' : ` (primary: "${exitLine.msg}", signal ${exitLine['signal']})`}; the \`/hang\` request itself: ${hung.error ?? `status ${hung.status}`}`,
    );
    const replacementMs = up.at - hangAt;
    const gone = goneAt !== undefined && !isAlive(stuck);
    return {
      rows: [
        info(
          NAME,
          'set-up',
          `2 workers, cluster.heartbeatTimeoutMs default (${HEARTBEAT_TIMEOUT_MS} ms), interval ${HEARTBEAT_INTERVAL_MS} ms; ${RATE} req/s on ${CONNECTIONS} keep-alive connections + a new-connection probe every ${PROBE_EVERY_MS} ms; client timeout ${CLIENT_TIMEOUT_MS} ms; one \`GET /hang\` (while (true) {}) 2 s in`,
        ),
        judged(
          NAME,
          'stuck request → replacement listening (primary log)',
          `${fmt(replacementMs)} ms (declared stuck after ${fmt(found.at - hangAt)} ms)`,
          `<= ${REPLACEMENT_TARGET_MS} ms`,
          replacementMs <= REPLACEMENT_TARGET_MS,
        ),
        info(
          NAME,
          'requests lost (failed or timed out) / sent, all',
          `${lost} / ${all} (keep-alive ${failed.length} / ${outcomes.length}, new-connection probes ${failedProbes.length} / ${probes.length}; the \`/hang\` request not counted)`,
        ),
        info(
          NAME,
          'keep-alive: failed on sockets bound to the stuck worker / those sockets',
          `${failedStuck.length} / ${stuckConnections.size} (its in-flight requests, one per socket with pipelining 1)`,
        ),
        judged(
          NAME,
          'requests lost among those sent to the healthy worker (keep-alive sockets bound to it, or answered by it)',
          `${failedHealthy.length} of ${toHealthy.length}`,
          '0',
          failedHealthy.length === 0,
        ),
        info(
          NAME,
          'new connections lost (worker unknown to the client: node:cluster may hand one to the stuck worker)',
          `${failedProbes.length} of ${probes.length} probes + ${failedNew.length} of ${outcomes.filter((o) => o.boundPid === undefined).length} load requests on new sockets`,
        ),
        info(
          NAME,
          'latency while stuck (hang → replacement listening): healthy worker keep-alive p99 / max; new-connection probes answered p99 / max',
          `${fmt(percentile(healthyDuring, 99), 1)} / ${fmt(max(healthyDuring), 1)} ms; ${fmt(percentile(probesDuring, 99), 1)} / ${fmt(max(probesDuring), 1)} ms`,
        ),
        judged(NAME, 'stuck pid gone', gone ? `yes, ${fmt((goneAt ?? 0) - hangAt)} ms after the hang` : 'NO: still alive', 'yes', gone),
      ],
      notes,
    };
  } finally {
    cluster.dispose();
  }
}
