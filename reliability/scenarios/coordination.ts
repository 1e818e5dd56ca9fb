import { pino } from 'pino';
import type { Coordinator, CoordinatorOptions } from '../../src/coordination/coordinator.ts';
import { Link } from '../../src/coordination/coordinator.ts';
import { postgresCoordinator } from '../../src/coordination/postgres.ts';
import { redisCoordinator } from '../../src/coordination/redis.ts';
import { PostgresServer, pgBin } from '../../tools/postgres-server.ts';
import { RedisServer, redisInstalled } from '../../tools/redis-server.ts';
import { sleep } from '../lib/clock.ts';
import { byMsg, Cluster } from '../lib/cluster.ts';
import type { Context, ScenarioOutcome } from '../lib/context.ts';
import { info, judged, type Row } from '../lib/report.ts';
import { fmt, max, percentile } from '../lib/stats.ts';

const NAME = 'coordination';
/** Fires claimed by three coordinators at once, in the round-trip measurement. */
const FIRES = 2_000;
const RENEWALS = 500;
/** Seconds of a one-second cron job on three replicas, and on a control cluster without coordination. */
const TICKS = 20;

interface Backend {
  name: 'redis' | 'postgres';
  installed: () => boolean;
  server(): Promise<RedisServer | PostgresServer>;
  open(options: CoordinatorOptions): Promise<Coordinator>;
}

const BACKENDS: readonly Backend[] = [
  { name: 'redis', installed: redisInstalled, server: () => RedisServer.create(), open: redisCoordinator },
  { name: 'postgres', installed: () => pgBin() !== undefined, server: () => PostgresServer.create(), open: postgresCoordinator },
];

/**
 * What `coordination.url` costs each cron fire, on a throwaway server of each backend on this
 * machine (loopback): the round trip of a claim, as three replicas make it for every fire (all three
 * at once; one wins), and of a lease renewal; then three replicas (clusters of one worker) running
 * a one-second job for 20 s next to a control cluster without coordination: how late each run
 * started after its scheduled second, and whether each fire ran exactly once.
 */
export async function coordination(ctx: Context): Promise<ScenarioOutcome> {
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const backend of BACKENDS) {
    const label = `${NAME} (${backend.name})`;
    if (!backend.installed()) {
      rows.push(
        info(
          label,
          'skipped',
          `${backend.name} is not installed (Debian package "${backend.name === 'redis' ? 'redis-server' : 'postgresql'}")`,
        ),
      );
      continue;
    }
    ctx.log(`${label}: a throwaway server`);
    const server = await backend.server();
    try {
      rows.push(...(await roundTrips(backend, server.url, label)));
      ctx.log(`${label}: three replicas and a control cluster, ${TICKS} s`);
      rows.push(...(await replicas(ctx, backend, server.url, label)));
    } finally {
      await server.dispose();
    }
  }
  notes.push(
    'The claim and renewal times are measured in this process around one call of the coordinator (the client library included), ' +
      'three replicas claiming each fire at the same moment; a replica pays one claim per fire, whether it wins or not. ' +
      'The lateness of runs is what a job sees: from its scheduled second to the start of its run, node-cron’s timer included.',
  );
  return { rows, notes };
}

async function roundTrips(backend: Backend, url: string, label: string): Promise<Row[]> {
  const logger = pino({ enabled: false });
  const open = (holder: string) =>
    backend.open({
      url,
      service: 'reliability',
      holder,
      timeoutMs: 1_000,
      leaseTtlMs: 15_000,
      leaseRenewMs: 5_000,
      logger,
      link: new Link(logger, () => {}),
    });
  const replicas = [await open('a'), await open('b'), await open('c')];
  try {
    // warm-up: connections, the tables, prepared statements, the scripts
    for (const r of replicas) await r.claim(`warm-up:${new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()}`, 60_000);
    const all: number[] = [];
    const won: number[] = [];
    const base = Math.floor(Date.now() / 1000) * 1000;
    for (let i = 0; i < FIRES; i++) {
      // fires of distinct jobs at the current second: each a new key, within the clock window
      const key = `job-${i}:${new Date(base).toISOString()}`;
      const timed = await Promise.all(
        replicas.map(async (r) => {
          const started = performance.now();
          const win = await r.claim(key, 60_000);
          return { ms: performance.now() - started, win };
        }),
      );
      for (const t of timed) {
        all.push(t.ms);
        if (t.win) won.push(t.ms);
      }
    }
    const lease = replicas[0] as Coordinator;
    const acquired = await lease.acquireLease();
    const renewals: number[] = [];
    if (acquired.held) {
      for (let i = 0; i < RENEWALS; i++) {
        const started = performance.now();
        await lease.renewLease();
        renewals.push(performance.now() - started);
      }
      await lease.releaseLease();
    }
    return [
      info(label, `claim of a fire, 3 replicas at once: p50 / p99 / max (${FIRES} fires, ${all.length} claims)`, ms3(all)),
      info(label, '… the winning claim: p50 / p99 / max', ms3(won)),
      info(label, `lease renewal: p50 / p99 / max (${renewals.length} renewals)`, ms3(renewals)),
    ];
  } finally {
    await Promise.all(replicas.map((r) => r.close()));
  }
}

async function replicas(ctx: Context, backend: Backend, url: string, label: string): Promise<Row[]> {
  const config = (coordinated: boolean) => ({
    serviceName: `reliability-${backend.name}`,
    workers: 1,
    logging: { requests: false },
    ...(coordinated ? { coordination: { url } } : {}),
  });
  const env = { RELIABILITY_TICK: '1' };
  const clusters = [1, 2, 3].map(() => new Cluster({ runtime: ctx.runtime, env, config: config(true) }));
  const control = new Cluster({ runtime: ctx.runtime, env, config: config(false) });
  try {
    await Promise.all([...clusters, control].map((c) => c.ready(1)));
    await Promise.all(clusters.map((c) => c.waitFor(byMsg('coordinator connected'), 'the coordinator connected', 10_000)));
    const from = Math.floor(Date.now() / 1000) * 1000 + 2_000;
    const to = from + (TICKS - 1) * 1000;
    await sleep(to - Date.now() + 1_500);
    const ticks = (c: Cluster) =>
      c.lines
        .filter(byMsg('reliability tick'))
        .filter((l) => Date.parse(String(l['fire']).slice(5)) >= from && Date.parse(String(l['fire']).slice(5)) <= to);
    const coordinated = clusters.flatMap(ticks);
    const alone = ticks(control);
    const runs = new Map<string, number>();
    for (const l of coordinated) runs.set(String(l['fire']), (runs.get(String(l['fire'])) ?? 0) + 1);
    const once = [...runs.values()].filter((n) => n === 1).length;
    const lateness = (lines: typeof coordinated) => lines.map((l) => Number(l['lateMs']));
    const late = lateness(coordinated);
    const lateControl = lateness(alone);
    return [
      judged(
        label,
        `fires run exactly once across 3 replicas, of ${TICKS}`,
        `${once} (${[...runs.values()].filter((n) => n > 1).length} twice or more)`,
        `${TICKS}`,
        once === TICKS && runs.size === TICKS,
      ),
      info(label, `run start after its scheduled second, 3 replicas: p50 / p99 / max (${late.length} runs)`, ms3(late)),
      info(label, `the same without coordination (control cluster): p50 / p99 / max (${lateControl.length} runs)`, ms3(lateControl)),
      info(
        label,
        'added latency per fire, p50 / p99 (coordinated − control)',
        `${fmt(percentile(late, 50) - percentile(lateControl, 50), 2)} / ${fmt(percentile(late, 99) - percentile(lateControl, 99), 2)} ms`,
      ),
    ];
  } finally {
    await Promise.all([...clusters, control].map((c) => c.stop().catch(() => undefined)));
    for (const c of [...clusters, control]) c.dispose();
  }
}

function ms3(values: readonly number[]): string {
  return `${fmt(percentile(values, 50), 2)} / ${fmt(percentile(values, 99), 2)} / ${fmt(max(values), 2)} ms`;
}
