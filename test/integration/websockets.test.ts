import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClusterProcess, configYaml } from '../../tools/cluster-process.ts';
import { byMsg, CLI, sample, scrapeUntil, tempFiles } from '../helpers/cluster.ts';
import { openSocket, type TestSocket } from '../helpers/websocket.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/websockets/service.ts', import.meta.url));

function startWs(t: TestContext, overrides: Record<string, unknown> = {}, env: Record<string, string> = {}): ClusterProcess {
  const dir = tempFiles(t, {});
  const file = join(dir, 'app.yaml');
  writeFileSync(file, configYaml({ serviceName: 'ws', service: SERVICE, logging: { requests: false } }, overrides));
  const cluster = new ClusterProcess({ cli: CLI, configFile: file, env });
  t.after(() => cluster.kill());
  return cluster;
}

function post(port: number, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens sockets on `/live` until both workers hold some (`count` at least); each greets with its worker's pid. */
async function socketsOnBothWorkers(port: number, count: number): Promise<{ sockets: TestSocket[]; pids: Map<TestSocket, string> }> {
  const sockets: TestSocket[] = [];
  const pids = new Map<TestSocket, string>();
  for (let i = 0; i < 200 && (sockets.length < count || new Set(pids.values()).size < 2); i++) {
    const socket = await openSocket(`ws://127.0.0.1:${port}/live`);
    const [hello] = await socket.received(1);
    pids.set(socket, String(hello).slice('hello '.length));
    sockets.push(socket);
  }
  return { sockets, pids };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

for (const balancing of ['primary', 'kernel'] as const) {
  test(`${balancing} balancing: sockets on both workers; a publish from a route and from a socket reach each exactly once`, async (t: TestContext) => {
    const cluster = startWs(t, { cluster: { balancing } });
    const { appPort } = await cluster.ready();
    const { sockets, pids } = await socketsOnBothWorkers(appPort, 6);
    t.assert.strictEqual(new Set(pids.values()).size, 2, 'sockets on both workers');
    t.assert.strictEqual(await post(appPort, '/news', 'from a route'), 204);
    await Promise.all(sockets.map((s) => s.received(2)));
    (sockets[0] as TestSocket).socket.send('publish:from a socket');
    await Promise.all(sockets.map((s) => s.received(3)));
    await settle();
    for (const socket of sockets) t.assert.deepStrictEqual(socket.messages.slice(1), ['from a route', 'from a socket']);
    // the gauge and the counters, summed over both workers by the primary
    const n = sockets.length;
    const text = await scrapeUntil(
      cluster.metricsPort,
      (m) =>
        sample(m, 'flotilla_websocket_connections') === n &&
        sample(m, 'flotilla_websocket_messages_total{direction="out"}') === 3 * n - n &&
        sample(m, 'flotilla_websocket_publishes_total{topic="other"}') === 2,
    );
    t.assert.strictEqual(sample(text, 'flotilla_websocket_messages_total{direction="in"}'), 1);
    for (const socket of sockets) socket.socket.close();
    await scrapeUntil(cluster.metricsPort, (m) => sample(m, 'flotilla_websocket_connections') === 0);
  });
}

test('a cron job in the primary publishes to the sockets of every worker', async (t: TestContext) => {
  const cluster = startWs(t, {}, { CRON_PUBLISH: '1' });
  const { appPort } = await cluster.ready();
  const { sockets, pids } = await socketsOnBothWorkers(appPort, 4);
  t.assert.strictEqual(new Set(pids.values()).size, 2);
  await Promise.all(sockets.map((s) => s.received(2, 15_000)));
  for (const socket of sockets) t.assert.strictEqual(socket.messages[1], 'tick');
  for (const socket of sockets) socket.socket.close();
});

test('an onRequest hook answers 401 before the upgrade; a message above maxMessageBytes closes with 1009', async (t: TestContext) => {
  const cluster = startWs(t, { websockets: { maxMessageBytes: 1024 } });
  const { appPort } = await cluster.ready();
  const refused = await openSocket(`ws://127.0.0.1:${appPort}/private`).then(
    () => 0,
    (error: { status?: number }) => error.status,
  );
  t.assert.strictEqual(refused, 401);
  const allowed = await openSocket(`ws://127.0.0.1:${appPort}/private`, { authorization: 'Bearer ok' });
  t.assert.deepStrictEqual(await allowed.received(1), ['welcome']);
  allowed.socket.close();
  const socket = await openSocket(`ws://127.0.0.1:${appPort}/live`);
  socket.socket.send('x'.repeat(2048));
  t.assert.strictEqual((await socket.closed).code, 1009);
});

test('SIGTERM with 2,000 open sockets: every client gets 1001 at once, and the tree exits 0 within the budget', async (t: TestContext) => {
  const cluster = startWs(t);
  const { appPort } = await cluster.ready();
  const sockets: TestSocket[] = [];
  // a burst of upgrades may be shed (503 OVERLOADED, Retry-After): such a client tries again, as a real one would
  const connect = async (): Promise<TestSocket> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await openSocket(`ws://127.0.0.1:${appPort}/live`);
      } catch (error) {
        if ((error as { status?: number }).status !== 503 || attempt > 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  for (let batch = 0; batch < 40; batch++) sockets.push(...(await Promise.all(Array.from({ length: 50 }, connect))));
  await Promise.all(sockets.map((s) => s.received(1)));
  const signalled = Date.now();
  cluster.signal('SIGTERM');
  const closes = await Promise.all(sockets.map((s) => s.closed));
  const after = closes.map((c) => c.at - signalled).sort((a, b) => a - b);
  const exit = await cluster.exit(15_000);
  const exitedAfter = Date.now() - signalled;
  t.diagnostic(
    `2000 sockets: 1001 seen after p50 ${after[1000]} ms, max ${after[1999]} ms; the tree exited ${exitedAfter} ms after SIGTERM`,
  );
  t.assert.ok(
    closes.every((c) => c.code === 1001),
    `codes: ${[...new Set(closes.map((c) => c.code))].join(', ')}`,
  );
  // 2 s on an idle machine; generous here, the machine is shared
  t.assert.ok((after[1999] as number) < 8_000, `the last 1001 arrived ${after[1999]} ms after SIGTERM`);
  t.assert.strictEqual(exit.code, 0);
  t.assert.ok(exitedAfter < 12_000, 'inside the budget plus its margin');
});

test('SIGHUP: sockets on retired workers get 1001, and their clients reconnect to the new workers', async (t: TestContext) => {
  const cluster = startWs(t);
  const { appPort, workers } = await cluster.ready();
  const before = new Set([...workers.values()].map(String));
  const { sockets, pids } = await socketsOnBothWorkers(appPort, 4);
  cluster.signal('SIGHUP');
  const closes = await Promise.all(sockets.map((s) => s.closed));
  t.assert.ok(
    closes.every((c) => c.code === 1001),
    `codes: ${closes.map((c) => c.code).join(', ')}`,
  );
  await cluster.waitFor(byMsg('rolling restart: done'), 'the rolling restart', 20_000);
  const again = await openSocket(`ws://127.0.0.1:${appPort}/live`);
  const [hello] = await again.received(1);
  const pid = String(hello).slice('hello '.length);
  t.assert.ok(!before.has(pid), `reconnected to a new worker (${pid}), not a retired one`);
  t.assert.ok([...pids.values()].every((p) => before.has(p)));
  again.socket.close();
});

test('the books example: each created book reaches the live feed on every worker', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const file = join(dir, 'app.yaml');
  const books = fileURLToPath(new URL('../../examples/books/service.ts', import.meta.url));
  const docs = { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } };
  // a database of the test's own: the example's default file would keep the book for the next run (409)
  const settings = { databaseFile: join(dir, 'books.sqlite'), apiKey: 'k', readerPassword: 'a-reader-password' };
  writeFileSync(file, configYaml({ serviceName: 'books', service: books, logging: { requests: false }, docs }, { settings }));
  const cluster = new ClusterProcess({ cli: CLI, configFile: file, execArgv: ['--conditions=source'] });
  t.after(() => cluster.kill());
  const { appPort } = await cluster.ready();
  const feeds = await Promise.all(Array.from({ length: 6 }, () => openSocket(`ws://127.0.0.1:${appPort}/api/books/live`)));
  const book = { isbn: '9780262510875', title: 'Structure and Interpretation', author: 'Abelson', year: 1985, pages: 657 };
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: appPort,
        path: '/api/books',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(book));
  });
  t.assert.strictEqual(status, 201);
  for (const feed of feeds) {
    const [message] = await feed.received(1);
    t.assert.deepStrictEqual({ ...JSON.parse(String(message)), id: undefined }, { ...book, id: undefined });
  }
  for (const feed of feeds) feed.socket.close();
});
