import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ClusterProcess, LogLine } from '../../tools/cluster-process.ts';
import { get, sample, scrapeUntil, startCluster, tempFiles } from './cluster.ts';

/** The fixture service of these tests: a one-second cron job and a lease-based scheduler, writing what runs where to files. */
const SERVICE = fileURLToPath(new URL('../fixtures/coordination/service.ts', import.meta.url));
/** Short leases, so that a takeover is seen within seconds. */
const LEASE_TTL_MS = 3_000;
const LEASE_RENEW_MS = 1_000;

/** A throwaway coordinator server: its URL, and a way to take it down and bring it back. */
export interface CoordinatorServer {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface Backend {
  /** The `backend` label: `redis` or `postgres`. */
  readonly name: string;
  /** The tests' `skip` option (the server is not installed outside CI). */
  readonly skip: string | false;
  start(t: TestContext): Promise<CoordinatorServer>;
}

/** One line of the fixture's files: `<event> <field> <primary pid> <epoch ms>`. */
interface Event {
  event: string;
  field: string;
  pid: number;
  at: number;
}

function events(file: string): Event[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [event = '', field = '', pid, at] = line.split(' ');
      return { event, field, pid: Number(pid), at: Number(at) };
    });
}

/** The scheduled time (epoch ms) of a fire key `tick:<ISO time>`. */
const fireAt = (key: string) => Date.parse(key.slice(key.indexOf(':') + 1));

/** Runs of each fire, by its scheduled time. */
function runsByFire(file: string): Map<number, Event[]> {
  const runs = new Map<number, Event[]>();
  for (const e of events(file).filter((e) => e.event === 'fire')) runs.set(fireAt(e.field), [...(runs.get(fireAt(e.field)) ?? []), e]);
  return runs;
}

/** The next whole second after `ms`, plus `plus` ms. */
const nextSecond = (ms: number, plus = 0) => Math.floor(ms / 1000) * 1000 + 1000 + plus;

async function until<T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** `n` clusters of the fixture service (one worker each) on one coordinator: replicas of a service; resolves once each is connected. */
async function replicas(t: TestContext, url: string, serviceName: string, env: Record<string, string>, n = 3): Promise<ClusterProcess[]> {
  const config = {
    serviceName,
    service: SERVICE,
    workers: 1,
    coordination: { url, leaseTtlMs: LEASE_TTL_MS, leaseRenewMs: LEASE_RENEW_MS, timeoutMs: 900 },
  };
  const clusters = Array.from({ length: n }, () => startCluster(t, { config, env }));
  await Promise.all(
    clusters.map(async (cluster) => {
      await cluster.ready(1, 30_000);
      // the schedulers' coordinator, in the service thread (the primary's main thread opens one for WebSocket topics too)
      const schedulers = (l: LogLine) => l.msg === 'coordinator connected' && l['thread'] === 'service';
      await cluster.waitFor(schedulers, "the schedulers' coordinator connected", 30_000);
    }),
  );
  return clusters;
}

/** The sum over `clusters` of one series of their `/metrics`. */
async function total(clusters: readonly ClusterProcess[], series: string): Promise<number> {
  let sum = 0;
  for (const cluster of clusters) sum += sample((await get(cluster.metricsPort, '/metrics')).body, series) ?? 0;
  return sum;
}

/**
 * The integration tests of `coordination.url` on one backend (issue "Schedulers once across
 * replicas"): three clusters of the fixture service on one machine stand for three replicas of a
 * service, on a real, throwaway coordinator server.
 */
export function coordinationSuite(backend: Backend): void {
  const { name, skip } = backend;
  const connected = `flotilla_coordination_connected{backend="${name}"}`;
  const skipped = 'flotilla_scheduler_runs_total{job="tick",outcome="skipped",reason="coordinator-error"}';

  test(`${name}: a one-second job runs each tick exactly once across three replicas, also after kill -9 of the primary that ran the last fire`, {
    skip,
    timeout: 120_000,
  }, async (t: TestContext) => {
    const server = await backend.start(t);
    const file = join(tempFiles(t, {}), 'fires');
    const clusters = await replicas(t, server.url, `once-${name}`, { FIXTURE_FIRES_FILE: file });

    // 20 ticks, the three replicas up
    const from = nextSecond(Date.now());
    const last = from + 19_000;
    const lastRun = await until(() => runsByFire(file).get(last)?.[0], 'the 20th tick', 40_000);
    const victim = clusters.find((c) => c.pid === lastRun.pid);
    t.assert.ok(victim, `the last fire ran in one of the primaries (${lastRun.pid})`);
    process.kill(victim.pid, 'SIGKILL');
    const killedAt = Date.now();
    await victim.exit(5_000);
    // then the two others, for 5 more ticks
    const after = nextSecond(killedAt);
    const end = after + 5_000;
    await until(() => (runsByFire(file).has(end) ? true : undefined), '5 ticks after the kill', 20_000);

    const runs = runsByFire(file);
    const twice = [...runs].filter(([, r]) => r.length > 1).map(([at, r]) => `${new Date(at).toISOString()} × ${r.length}`);
    t.assert.deepStrictEqual(twice, [], 'no fire ran twice');
    const missing = (start: number, stop: number) => {
      const out: string[] = [];
      for (let at = start; at <= stop; at += 1000) if (runs.get(at)?.length !== 1) out.push(new Date(at).toISOString());
      return out;
    };
    t.assert.deepStrictEqual(missing(from, last), [], 'each of the 20 ticks ran once');
    t.assert.deepStrictEqual(missing(after, end), [], 'each tick after the kill ran once, on the two others');
    t.assert.ok(
      [...runs].filter(([at]) => at >= after).every(([, [r]]) => r?.pid !== victim.pid),
      'none in the killed one',
    );
    const winners = new Map<number, number>();
    for (const [at, [r]] of runs) if (at >= from && r !== undefined) winners.set(r.pid, (winners.get(r.pid) ?? 0) + 1);
    t.diagnostic(`fires won by primary: ${JSON.stringify(Object.fromEntries(winners))}`);
  });

  test(`${name}: while the coordinator is down for 3 s, ticks are skipped and counted, none runs twice, and the next ones run once`, {
    skip,
    timeout: 120_000,
  }, async (t: TestContext) => {
    const server = await backend.start(t);
    const file = join(tempFiles(t, {}), 'fires');
    const clusters = await replicas(t, server.url, `outage-${name}`, { FIXTURE_FIRES_FILE: file });
    const settled = nextSecond(Date.now(), 1_000);
    await until(() => (runsByFire(file).has(settled) ? true : undefined), 'a tick with the three replicas up', 10_000);

    await server.stop();
    const down = Date.now();
    await sleep(1_500);
    // during the outage: the workers answer /health as ever, the primaries report the coordinator unreachable
    for (const cluster of clusters) {
      t.assert.strictEqual((await get(cluster.appPort, '/health')).status, 200, "a worker's /health does not depend on the coordinator");
      await scrapeUntil(cluster.metricsPort, (text) => sample(text, connected) === 0, 5_000);
    }
    await sleep(Math.max(0, down + 3_000 - Date.now()));
    await server.start();
    const up = Date.now();
    const reconnected = (line: LogLine) => line.msg === 'coordinator reachable again' && line.at >= down;
    await Promise.all(clusters.map((c) => c.waitFor(reconnected, 'the coordinator reachable again', 15_000)));
    const from = nextSecond(Date.now());
    const end = from + 3_000;
    await until(() => (runsByFire(file).has(end) ? true : undefined), '4 ticks after the outage', 15_000);

    const runs = runsByFire(file);
    t.assert.deepStrictEqual(
      [...runs].filter(([, r]) => r.length > 1).map(([at]) => new Date(at).toISOString()),
      [],
      'no fire ran twice',
    );
    // the ticks whose claims fell in the outage (a claim is made within a second of its tick)
    const gap: number[] = [];
    for (let at = nextSecond(down - 1); at <= up - 1_000; at += 1000) gap.push(at);
    t.assert.ok(gap.length >= 2, `${gap.length} ticks in the outage`);
    t.assert.deepStrictEqual(
      gap.filter((at) => runs.has(at)).map((at) => new Date(at).toISOString()),
      [],
      'no tick of the outage ran',
    );
    const skips = clusters.flatMap((c) =>
      c.lines.filter((l) => l.msg?.startsWith('scheduled job skipped') && l['reason'] === 'coordinator-error'),
    );
    t.assert.deepStrictEqual(
      gap.filter((at) => !skips.some((l) => l['fire'] === `tick:${new Date(at).toISOString()}`)).map((at) => new Date(at).toISOString()),
      [],
      'each tick of the outage was logged as skipped',
    );
    // counted too, on each replica that tried (pushed to its primary's /metrics within a second)
    const deadline = Date.now() + 5_000;
    let counted = await total(clusters, skipped);
    while (counted < gap.length && Date.now() < deadline) {
      await sleep(200);
      counted = await total(clusters, skipped);
    }
    t.assert.ok(counted >= gap.length, `${counted} skips counted in flotilla_scheduler_runs_total for ${gap.length} ticks`);
    for (let at = from; at <= end; at += 1000)
      t.assert.strictEqual(runs.get(at)?.length, 1, `the tick at ${new Date(at).toISOString()} ran once`);
    for (const cluster of clusters) await scrapeUntil(cluster.metricsPort, (text) => sample(text, connected) === 1, 5_000);
  });

  test(`${name}: a lease-based scheduler runs on one replica, moves to another within the lease TTL after kill -9, with a greater fencing token`, {
    skip,
    timeout: 120_000,
  }, async (t: TestContext) => {
    const server = await backend.start(t);
    const file = join(tempFiles(t, {}), 'lease');
    const clusters = await replicas(t, server.url, `lease-${name}`, { FIXTURE_LEASE_FILE: file });
    const held = `flotilla_coordination_lease_held{backend="${name}"}`;

    const first = await until(() => events(file).find((e) => e.event === 'start'), 'a replica taking the lease', 10_000);
    await sleep(1_500);
    t.assert.deepStrictEqual(new Set(events(file).map((e) => e.pid)), new Set([first.pid]), 'one replica runs it');
    for (const cluster of clusters) {
      await scrapeUntil(cluster.metricsPort, (text) => sample(text, held) === (cluster.pid === first.pid ? 1 : 0), 5_000);
    }

    const holder = clusters.find((c) => c.pid === first.pid);
    t.assert.ok(holder);
    process.kill(holder.pid, 'SIGKILL');
    const killedAt = Date.now();
    const second = await until(
      () => events(file).find((e) => e.event === 'start' && e.pid !== first.pid),
      'another replica taking the lease',
      15_000,
    );
    t.diagnostic(`${name}: taken over ${second.at - killedAt} ms after kill -9 (lease TTL ${LEASE_TTL_MS} ms)`);
    t.assert.ok(second.at - killedAt <= LEASE_TTL_MS + 1_000, `taken over ${second.at - killedAt} ms after the kill`);
    t.assert.ok(Number(second.field) > Number(first.field), `fencing token ${second.field} > ${first.field}`);
    await sleep(1_500);
    t.assert.ok(
      events(file)
        .filter((e) => e.at >= second.at)
        .every((e) => e.pid === second.pid),
      'one replica runs it after the takeover',
    );

    // a graceful stop gives the lease up at once: the last replica takes it without waiting for the TTL
    const next = clusters.find((c) => c.pid === second.pid);
    t.assert.ok(next);
    next.signal('SIGTERM');
    const third = await until(
      () => events(file).find((e) => e.event === 'start' && e.pid !== first.pid && e.pid !== second.pid),
      'the last replica taking the lease',
      15_000,
    );
    const stopped = events(file).find((e) => e.event === 'stop' && e.pid === second.pid);
    t.assert.ok(stopped !== undefined && stopped.at <= third.at, 'the holder stopped its scheduler before the next one started');
    t.assert.ok(third.at - stopped.at <= LEASE_RENEW_MS + 1_000, `taken ${third.at - stopped.at} ms after the graceful stop`);
    t.assert.ok(Number(third.field) > Number(second.field), `fencing token ${third.field} > ${second.field}`);
    await next.exit(15_000);
  });
}
