import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, sample, scrapeUntil, startCluster, tempFiles, who } from '../helpers/cluster.ts';

/** These tests are about the primary's hand-off: `balancing: primary` (the default is `kernel`). */
const PRIMARY = { cluster: { balancing: 'primary' } };

// The primary's own connection hand-off (cluster.balancing: primary, src/primary/distributor.ts), with
// the real CLI, real workers and raw sockets: what a client sees when every worker is saturated, when it
// leaves while it waits, when a worker is stuck, and when the cluster shuts down with connections queued.

interface Outcome {
  /** The status line's code, or what happened instead of an answer. */
  status: number | 'reset' | 'closed' | 'timeout';
  head: string;
  body: string;
}

/** One GET on a fresh connection, read raw until the server closes it: an answer, a reset, or a close without one. */
function rawGet(port: number, path: string, timeoutMs = 15_000): Promise<Outcome> {
  return rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, timeoutMs);
}

/** One raw request on a fresh connection (see `rawGet`). */
function rawRequest(port: number, request: string | Buffer, timeoutMs = 15_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    const done = (failure?: Outcome['status']) => {
      clearTimeout(timer);
      socket.destroy();
      const end = data.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1]);
      if (failure !== undefined || Number.isNaN(status)) resolve({ status: failure ?? 'closed', head: data, body: '' });
      else resolve({ status, head: data.slice(0, end), body: data.slice(end + 4) });
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('end', () => done());
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNRESET' ? 'reset' : 'closed'));
    socket.write(request);
  });
}

/** Resolves once `n` connections' worth of time has let the primary hand them over: a few event-loop turns there. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/**
 * `count` requests to `path` (`/busy` or `/hang`, which block a worker each): resolves once that many workers
 * have started to block (the fixture marks it in a file), with the answers to come. A loaded machine may take
 * a while to get there, and a worker that has not started blocking yet still takes connections.
 */
async function blocking(t: TestContext, port: number, path: string, count: number): Promise<Promise<Outcome>[]> {
  const mark = join(tempFiles(t, { blocked: '' }), 'blocked');
  const marked = `${path}${path.includes('?') ? '&' : '?'}mark=${encodeURIComponent(mark)}`;
  const answers = Array.from({ length: count }, () => rawGet(port, marked, 60_000));
  const blocked = () => new Set(readFileSync(mark, 'utf8').split('\n').filter(Boolean)).size;
  for (const deadline = Date.now() + 15_000; blocked() < count; await sleep(10)) {
    if (Date.now() > deadline) throw new Error(`${blocked()} of ${count} workers started to block`);
  }
  return answers;
}

test('with every worker saturated, the primary answers the excess itself: 503 OVERLOADED with Retry-After', async (t: TestContext) => {
  const cluster = startCluster(t, { config: PRIMARY });
  const { appPort, metricsPort } = await cluster.ready();
  // one blocking request per worker: neither reads its IPC channel for 3 s
  const busy = await blocking(t, appPort, '/busy?ms=3000', 2);
  // each blocked worker may still be handed up to 4 (it acknowledged its last within 2 ms); the rest waits
  const excess = await Promise.all(Array.from({ length: 16 }, () => rawGet(appPort, '/who')));
  const shed = excess.filter((o) => o.status === 503);
  t.assert.ok(shed.length >= 1, `503s among the excess: ${excess.map((o) => o.status).join(', ')}`);
  for (const o of shed) {
    t.assert.match(o.head, /\r\nRetry-After: 1\r\n/);
    t.assert.match(o.head, /\r\nContent-Type: application\/problem\+json\r\n/);
    // the primary's raw answer carries the security headers of every other reply
    t.assert.match(o.head, /\r\nX-Content-Type-Options: nosniff\r\n/);
    t.assert.match(o.head, /\r\nCross-Origin-Resource-Policy: same-origin\r\n/);
    const problem = JSON.parse(o.body) as { code: string; status: number; instance: string };
    t.assert.strictEqual(problem.code, 'OVERLOADED');
    t.assert.strictEqual(problem.status, 503);
    t.assert.strictEqual(problem.instance, '/who');
  }
  // nothing is lost: every other connection is answered by a worker once it is free again
  for (const o of excess) t.assert.ok(o.status === 503 || o.status === 200, `outcome ${o.status}`);
  for (const o of excess.filter((e) => e.status === 200)) t.assert.match(o.head, /\r\nX-Frame-Options: DENY\r\n/i);
  for (const o of await Promise.all(busy)) t.assert.strictEqual(o.status, 200);
  const text = await scrapeUntil(metricsPort, (s) => (sample(s, 'flotilla_requests_shed_total{reason="queue"}') ?? 0) >= shed.length);
  t.assert.strictEqual(sample(text, 'flotilla_requests_shed_total{reason="queue"}'), shed.length);
  t.assert.ok((sample(text, 'flotilla_handoff_wait_seconds_count') ?? 0) >= 2);
});

test('a connection whose client left while it waited in the primary is never handed to a worker', async (t: TestContext) => {
  // a queue that never sheds: the connection waits until a worker is free again
  const cluster = startCluster(t, { config: { ...PRIMARY, overload: { queueTargetMs: 60_000, queueIntervalMs: 60_000 } } });
  const { appPort, metricsPort } = await cluster.ready();
  const busy = await blocking(t, appPort, '/busy?ms=3000', 2);
  // one more per worker: handed over, waiting in the workers' channels
  const handed = [rawGet(appPort, '/who'), rawGet(appPort, '/who')];
  await settle();
  // this one waits in the primary's queue; its client sends its request, then leaves
  const leaver = connect({ host: '127.0.0.1', port: appPort });
  leaver.write('GET /who HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await settle();
  leaver.end();
  await Promise.all([...busy, ...handed]);
  const text = await scrapeUntil(metricsPort, (s) => sample(s, 'flotilla_requests_shed_total{reason="client-gone"}') === 1);
  // the two handed /who requests were served, the leaver's never reached a worker
  const whos = await scrapeUntil(metricsPort, (s) => sample(s, 'fixture_who_total') === 2);
  t.assert.strictEqual(sample(whos, 'fixture_who_total'), 2);
  t.assert.strictEqual(sample(text, 'flotilla_requests_shed_total{reason="queue"}'), 0);
  t.assert.strictEqual((await get(appPort, '/who')).status, 200);
});

test('a stuck worker receives no new connection after the first it cannot acknowledge', async (t: TestContext) => {
  // the watchdog off: the stuck worker stays stuck for the whole test
  const cluster = startCluster(t, { config: { cluster: { balancing: 'primary', heartbeatTimeoutMs: 0 } } });
  const { appPort, workers } = await cluster.ready();
  await blocking(t, appPort, '/hang', 1);
  const answered: number[] = [];
  let unanswered = 0;
  for (let i = 0; i < 20; i++) {
    try {
      answered.push(await who(appPort));
    } catch {
      unanswered++;
    }
  }
  // at most one connection went to the stuck worker (its acknowledgement never comes); the rest to the other
  t.assert.ok(unanswered <= 1, `${unanswered} connections unanswered`);
  t.assert.strictEqual(new Set(answered).size, 1, 'one worker answered everything');
  t.assert.ok([...workers.values()].includes(answered[0] as number));
});

test('SIGTERM with connections queued in the primary: each is answered, none is reset', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { ...PRIMARY, overload: { queueTargetMs: 60_000, queueIntervalMs: 60_000 } } });
  const { appPort } = await cluster.ready();
  const busy = await blocking(t, appPort, '/busy?ms=2000', 2);
  const queued = Array.from({ length: 20 }, () => rawGet(appPort, '/who'));
  await settle();
  cluster.signal('SIGTERM');
  const outcomes = await Promise.all([...busy, ...queued]);
  for (const o of outcomes) t.assert.ok(typeof o.status === 'number', `an outcome without an answer: ${o.status}`);
  t.assert.deepStrictEqual(
    outcomes.filter((o) => o.status !== 200 && o.status !== 503).map((o) => o.status),
    [],
  );
  t.assert.strictEqual((await cluster.exit(15_000)).code, 0);
});

test('a large upload that waited in the primary reaches the worker whole', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { ...PRIMARY, overload: { queueTargetMs: 60_000, queueIntervalMs: 60_000 } } });
  const { appPort } = await cluster.ready();
  const busy = await blocking(t, appPort, '/busy?ms=2000', 2);
  const handed = [rawGet(appPort, '/who'), rawGet(appPort, '/who')];
  await settle();
  // queued in the primary, which reads its head and part of its body before a worker is free
  const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  const head = `POST /digest HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  const upload = await rawRequest(appPort, Buffer.concat([Buffer.from(head), body]));
  await Promise.all([...busy, ...handed]);
  t.assert.strictEqual(upload.status, 200, upload.head);
  t.assert.deepStrictEqual(JSON.parse(upload.body), { bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
});
