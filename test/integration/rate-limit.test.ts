import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ClusterProcess } from '../../tools/cluster-process.ts';
import { get, sample, scrapeUntil, startCluster, untilEachAnswered } from '../helpers/cluster.ts';
import { httpRequest, type SimpleResponse } from '../helpers/http.ts';
import { postgresServer, SKIP_WITHOUT_POSTGRES } from '../helpers/postgres-server.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';

/** `GET /limited` admits 50 requests per client address and minute; `GET /open` has no limit. */
const SERVICE = fileURLToPath(new URL('../fixtures/rate-limit/service.ts', import.meta.url));
const REQUESTS = 150;
const MAX = 50;

/** `total` requests to `GET /limited`, spread over `ports` in turn, 10 at a time (a burst, not an overload). */
async function burst(ports: readonly number[], total: number): Promise<SimpleResponse[]> {
  const answers: SimpleResponse[] = [];
  for (let sent = 0; sent < total; sent += 10) {
    const batch = Array.from({ length: Math.min(10, total - sent) }, (_, i) =>
      httpRequest(ports[(sent + i) % ports.length] as number, '/limited'),
    );
    answers.push(...(await Promise.all(batch)));
  }
  return answers;
}

/** Exactly `MAX` admitted, the rest refused with the problem and its headers; the pids that admitted. */
function assertLimited(t: TestContext, answers: readonly SimpleResponse[]): Set<number> {
  const byStatus = new Map<number, number>();
  for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  t.assert.deepStrictEqual(Object.fromEntries(byStatus), { 200: MAX, 429: REQUESTS - MAX }, 'exactly 50 admitted, the rest refused');
  for (const a of answers.filter((a) => a.status === 200)) {
    t.assert.equal(a.headers['ratelimit-policy'], '"GET /limited";q=50;w=60');
    t.assert.match(String(a.headers['ratelimit']), /^"GET \/limited";r=\d+;t=\d+$/);
  }
  for (const a of answers.filter((a) => a.status === 429)) {
    t.assert.equal(a.headers['content-type'], 'application/problem+json');
    t.assert.equal((JSON.parse(a.body) as { code: string }).code, 'RATE_LIMITED');
    const retryAfter = Number(a.headers['retry-after']);
    t.assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${a.headers['retry-after']}`);
    t.assert.equal(a.headers['ratelimit-policy'], '"GET /limited";q=50;w=60');
    t.assert.match(String(a.headers['ratelimit']), /^"GET \/limited";r=0;t=([1-9]|[1-5][0-9]|60)$/);
  }
  const remaining = answers.filter((a) => a.status === 200).map((a) => Number(/;r=(\d+)/.exec(String(a.headers['ratelimit']))?.[1]));
  t.assert.deepStrictEqual(
    remaining.toSorted((a, b) => a - b),
    Array.from({ length: MAX }, (_, i) => i),
    'each admitted request saw its own remaining count: 49 … 0',
  );
  return new Set(answers.filter((a) => a.status === 200).map((a) => (JSON.parse(a.body) as { pid: number }).pid));
}

/** The cluster's count of one result of `GET /limited`, once its workers pushed it. */
async function counted(cluster: ClusterProcess, result: string, atLeast: number): Promise<number> {
  const series = `flotilla_rate_limit_requests_total{route="/limited",result="${result}"}`;
  const text = await scrapeUntil(cluster.metricsPort, (body) => (sample(body, series) ?? 0) >= atLeast, 10_000);
  return sample(text, series) ?? 0;
}

test('2 workers, fresh connections: 150 requests admitted exactly 50 times, both workers among them; the rest 429 with the headers', {
  timeout: 60_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, { config: { service: SERVICE } }).ready(2, 30_000);
  const answers = await burst([cluster.appPort], REQUESTS);
  const admittedBy = assertLimited(t, answers);
  t.assert.deepStrictEqual(admittedBy, new Set(cluster.workers.values()), 'both workers admitted some');
  t.assert.equal(await counted(cluster, 'allowed', MAX), MAX);
  t.assert.equal(await counted(cluster, 'limited', REQUESTS - MAX), REQUESTS - MAX);
  // a route without a limit is not counted, and answers without the headers
  const open = await httpRequest(cluster.appPort, '/open');
  t.assert.equal(open.status, 200);
  t.assert.equal(open.headers['ratelimit'], undefined);
  t.assert.equal((await get(cluster.appPort, '/health')).status, 200);
});

test('2 workers: a login limited per account counts only failed logins, whichever worker answers', {
  timeout: 60_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, { config: { service: SERVICE } }).ready(2, 30_000);
  const login = (name: string, password: string) =>
    httpRequest(cluster.appPort, '/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, password }),
    });
  // successful logins are taken back after their response: any number pass, one after the other
  // (counted as they arrive, more than 3 at once would be refused: requests together never pass the limit)
  const pidOf = (r: SimpleResponse) => (JSON.parse(r.body) as { pid?: number }).pid ?? 0;
  const good = await untilEachAnswered(cluster.workers.values(), () => login('ada', 'right'), pidOf, 12);
  t.assert.deepStrictEqual(
    good.map((r) => r.status),
    Array(good.length).fill(200),
  );
  const pids = new Set(good.map(pidOf));
  // three failures for one account, on fresh connections (so both workers), then even the right password is refused
  const failures = [];
  for (let i = 0; i < 3; i++) failures.push(await login('grace', 'wrong'));
  t.assert.deepStrictEqual(
    failures.map((r) => r.status),
    [401, 401, 401],
  );
  const locked = await login('grace', 'right');
  t.assert.equal(locked.status, 429);
  t.assert.equal((JSON.parse(locked.body) as { code: string }).code, 'RATE_LIMITED');
  t.assert.match(String(locked.headers['ratelimit-policy']), /q=3;w=60/);
  // another account is not affected, and ada (whose logins all succeeded) is not locked either
  t.assert.equal((await login('edsger', 'right')).status, 200);
  t.assert.equal((await login('ada', 'wrong')).status, 401);
  t.assert.equal(pids.size, 2, `both workers answered the successful logins (${[...pids].join(', ')})`);
});

/** Two replicas (clusters of 2 workers) of one service on one coordinator: one budget between them. */
async function replicasShare(t: TestContext, url: string, name: string): Promise<void> {
  const config = { service: SERVICE, serviceName: `rate-${name}`, coordination: { url } };
  const replicas = [startCluster(t, { config }), startCluster(t, { config })];
  await Promise.all(replicas.map((r) => r.ready(2, 30_000)));
  const answers = await burst(
    replicas.map((r) => r.appPort),
    REQUESTS,
  );
  const admittedBy = assertLimited(t, answers);
  for (const [i, replica] of replicas.entries()) {
    const own = [...replica.workers.values()].filter((pid) => admittedBy.has(pid));
    t.assert.ok(own.length > 0, `replica ${i} admitted some (${[...admittedBy].join(', ')})`);
  }
  // each replica's workers push their counts within a second: the sum settles at 50
  const series = 'flotilla_rate_limit_requests_total{route="/limited",result="allowed"}';
  let allowed = 0;
  for (const deadline = Date.now() + 10_000; allowed !== MAX && Date.now() < deadline; await sleep(100)) {
    allowed = 0;
    for (const r of replicas) allowed += sample((await get(r.metricsPort, '/metrics')).body, series) ?? 0;
  }
  t.assert.equal(allowed, MAX, 'the replicas together counted 50 allowed');
}

test('two replicas sharing a throwaway redis-server admit exactly 50 of 150 between them', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await redisServer(t);
  await replicasShare(t, server.url, 'redis');
});

test('two replicas sharing a throwaway PostgreSQL admit exactly 50 of 150 between them', {
  skip: SKIP_WITHOUT_POSTGRES,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await postgresServer(t);
  await replicasShare(t, server.url, 'postgres');
});

test('Redis down: a fail-open route admits without the headers, a fail-closed one answers 503; counting resumes when it is back', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 90_000,
}, async (t: TestContext) => {
  const server = await redisServer(t);
  const cluster = await startCluster(t, {
    config: { service: SERVICE, serviceName: 'rate-down', coordination: { url: server.url } },
  }).ready(2, 30_000);
  const up = await httpRequest(cluster.appPort, '/limited');
  t.assert.equal(up.status, 200);
  t.assert.match(String(up.headers['ratelimit']), /;r=49;/);
  await server.stop();
  for (let i = 0; i < 4; i++) {
    const open = await httpRequest(cluster.appPort, '/limited');
    t.assert.equal(open.status, 200, 'fail open: admitted');
    t.assert.equal(open.headers['ratelimit'], undefined, 'no count, no fields');
    const closed = await httpRequest(cluster.appPort, '/closed');
    t.assert.equal(closed.status, 503, 'fail closed: refused');
    t.assert.equal((JSON.parse(closed.body) as { code: string }).code, 'UNAVAILABLE');
    t.assert.equal(closed.headers['retry-after'], '1');
  }
  t.assert.ok((await counted(cluster, 'failed-open', 4)) >= 4);
  await cluster.waitFor((line) => line['msg'] === 'rate limit not counted: the store failed, requests are answered 503', 'the warning');
  await server.start();
  // the client reconnects with backoff (at most 1 s between attempts): the window starts anew on the empty server
  let back: SimpleResponse | undefined;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(200)) {
    back = await httpRequest(cluster.appPort, '/limited');
    if (back.headers['ratelimit'] !== undefined) break;
  }
  t.assert.equal(back?.status, 200);
  t.assert.match(String(back?.headers['ratelimit']), /^"GET \/limited";r=49;t=60$/);
});
