import type { Worker } from 'node:cluster';
import { once } from 'node:events';
import { connect, Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { type ConnectionMessage, isPrimaryMessage } from '../../src/ipc/protocol.ts';
import { Distributor, type DistributorOptions } from '../../src/primary/distributor.ts';

// The distributor with real sockets and stand-in workers: each records what it is handed and
// acknowledges when the test says so, as a worker's event loop would when it reads its channel.

interface Handed {
  socket: Socket;
  head: Buffer;
}

class FakeWorker {
  readonly handed: Handed[] = [];
  readonly messages: unknown[] = [];
  connected = true;
  readonly process = { pid: 4242 };
  isConnected(): boolean {
    return this.connected;
  }
  send(message: unknown, handle?: unknown, _options?: unknown, callback?: (error: Error | null) => void): boolean {
    this.messages.push(message);
    if (handle !== undefined && isPrimaryMessage(message) && message.type === 'flotilla:connection') {
      this.handed.push({ socket: received(handle), head: Buffer.from((message as ConnectionMessage).head, 'base64') });
    }
    callback?.(null);
    return true;
  }
}

/**
 * What a worker makes of a handed connection: node sends a net.Socket as one, and a raw handle (a
 * connection the primary handed on as it accepted it) raw. A real worker gets a descriptor of its own;
 * here both ends share the handle, so the primary's close of its copy (without a callback, where a
 * socket's destroy passes one) is left out.
 */
function received(handle: unknown): Socket {
  if (handle instanceof Socket) return handle;
  const raw = handle as { close(callback?: () => void): void };
  const close = raw.close.bind(raw);
  raw.close = (callback) => {
    if (callback !== undefined) close(callback);
  };
  return new Socket({ handle: raw, readable: true, writable: true } as never);
}

const asWorker = (w: FakeWorker) => w as unknown as Worker;

function start(t: TestContext, overrides: Partial<DistributorOptions> = {}) {
  const counts = { queue: 0, 'client-gone': 0, waited: 0, queued: 0 };
  const distributor = new Distributor({
    shed: true,
    targetMs: 20,
    intervalMs: 100,
    retryAfterS: 1,
    priorityPaths: ['/health'],
    logger: pino({ level: 'silent' }),
    metrics: {
      shed: (reason) => counts[reason]++,
      waited: () => counts.waited++,
      queued: (n) => {
        counts.queued = n;
      },
    },
    ...overrides,
  });
  t.after(() => distributor.close());
  return { distributor, counts };
}

/** A client connection that sends one GET and collects what comes back until the server closes it. */
function client(port: number, path = '/x'): { socket: Socket; reply: Promise<string> } {
  const socket = connect({ host: '127.0.0.1', port });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`);
  let data = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    data += chunk;
  });
  const reply = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(data));
    socket.on('error', () => {});
  });
  return { socket, reply };
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 2));
};

/**
 * Long enough for a hand-off to be stale (FRESH_MS in distributor.ts): a worker that has not acknowledged
 * one for this long takes no other, as a stuck or busy worker would.
 */
const stale = () => new Promise((r) => setTimeout(r, 10));

/** A distributor with one worker that was handed a connection and has not acknowledged it for a while: the next ones wait. */
async function oneBusyWorker(t: TestContext, overrides: Partial<DistributorOptions> = {}) {
  const { distributor, counts } = start(t, overrides);
  const { port } = await distributor.listen('127.0.0.1', 0);
  const worker = new FakeWorker();
  distributor.add(asWorker(worker));
  client(port);
  await until(() => worker.handed.length === 1);
  await stale();
  return { distributor, counts, port, worker };
}

test('connections go to the worker with the fewest unacknowledged hand-offs, ties in turn', async (t: TestContext) => {
  const { distributor } = start(t);
  const { port } = await distributor.listen('127.0.0.1', 0);
  const [a, b] = [new FakeWorker(), new FakeWorker()];
  distributor.add(asWorker(a));
  distributor.add(asWorker(b));
  // both idle: in turn, and each acknowledged at once
  for (let i = 0; i < 4; i++) {
    client(port);
    await until(() => a.handed.length + b.handed.length === i + 1);
    distributor.acked(asWorker(i % 2 === 0 ? a : b), true);
  }
  t.assert.deepStrictEqual([a.handed.length, b.handed.length], [2, 2]);
  // a does not acknowledge: the next ones go to b while b does
  client(port);
  await until(() => a.handed.length === 3);
  for (let i = 0; i < 3; i++) {
    client(port);
    await until(() => b.handed.length === 3 + i);
    distributor.acked(asWorker(b), true);
  }
  t.assert.strictEqual(a.handed.length, 3, 'the worker that does not acknowledge gets nothing more');
  for (const h of [...a.handed, ...b.handed]) h.socket.destroy();
});

test('a connection no worker can take waits, and is handed over with what the primary read of it', async (t: TestContext) => {
  const { distributor, counts, port, worker: w } = await oneBusyWorker(t, { targetMs: 60_000, intervalMs: 60_000 });
  client(port, '/second');
  await until(() => counts.queued === 1);
  // the second waits; its bytes are read meanwhile, and travel with it
  await new Promise((r) => setTimeout(r, 50));
  distributor.acked(asWorker(w), true);
  await until(() => w.handed.length === 2);
  t.assert.match((w.handed[1] as Handed).head.toString('latin1'), /^GET \/second HTTP\/1\.1\r\n/);
  t.assert.strictEqual(counts.queued, 0);
  for (const h of w.handed) h.socket.destroy();
});

test('a client that leaves while its connection waits is dropped, never handed over', async (t: TestContext) => {
  const { distributor, counts, port, worker: w } = await oneBusyWorker(t, { targetMs: 60_000, intervalMs: 60_000 });
  const leaver = client(port);
  await until(() => counts.queued === 1);
  leaver.socket.end();
  await until(() => counts['client-gone'] === 1);
  distributor.acked(asWorker(w), true);
  await new Promise((r) => setTimeout(r, 20));
  t.assert.strictEqual(w.handed.length, 1);
  (w.handed[0] as Handed).socket.destroy();
});

test('a standing queue is cut to the target: the primary answers 503 OVERLOADED with Retry-After', async (t: TestContext) => {
  const { counts, port, worker: stuck } = await oneBusyWorker(t, { targetMs: 10, intervalMs: 30, warmupMs: 0 });
  const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => client(port, `/p${i}`).reply));
  for (const [i, reply] of replies.entries()) {
    t.assert.match(reply, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    t.assert.match(reply, /\r\nRetry-After: 1\r\n/);
    const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { code: string; instance: string };
    t.assert.strictEqual(body.code, 'OVERLOADED');
    t.assert.strictEqual(body.instance, `/p${i}`);
  }
  t.assert.strictEqual(counts.queue, 5);
  (stuck.handed[0] as Handed).socket.destroy();
});

test("in a worker's warm-up, what waits is shed only past 200 ms, standing for 500 ms", async (t: TestContext) => {
  // the worker's first connection was handed just now: it warms up for warmupMs
  const { counts, port, worker: stuck } = await oneBusyWorker(t, { targetMs: 10, intervalMs: 30, warmupMs: 60_000 });
  const waiting = client(port, '/cold');
  await new Promise((r) => setTimeout(r, 600));
  t.assert.strictEqual(counts.queue, 0, 'past the 10 / 30 ms deadline, but the worker warms up: the connection waits');
  t.assert.match(await waiting.reply, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
  t.assert.strictEqual(counts.queue, 1);
  (stuck.handed[0] as Handed).socket.destroy();
});

test('while a worker starts (forked, not yet up), a queue must stand 500 ms before it drops', async (t: TestContext) => {
  const { distributor, counts, port, worker: busy } = await oneBusyWorker(t, { targetMs: 10, intervalMs: 30, warmupMs: 1 });
  const starting = new FakeWorker();
  distributor.starting(asWorker(starting));
  const waiting = client(port, '/during-a-start');
  await new Promise((r) => setTimeout(r, 150));
  t.assert.strictEqual(counts.queue, 0, 'past the 30 ms interval, but a worker is starting: the connection waits');
  distributor.add(asWorker(starting));
  await until(() => starting.handed.length === 1);
  t.assert.strictEqual(counts.queue, 0, 'handed to the worker once it is up');
  for (const h of [...busy.handed, ...starting.handed]) h.socket.destroy();
  waiting.socket.destroy();
});

test('with overload.enabled false, nothing is shed: the queue waits for the workers', async (t: TestContext) => {
  const { distributor, counts, port, worker: w } = await oneBusyWorker(t, { shed: false, targetMs: 1, intervalMs: 1 });
  client(port);
  await new Promise((r) => setTimeout(r, 50));
  t.assert.strictEqual(counts.queue, 0);
  distributor.acked(asWorker(w), true);
  await until(() => w.handed.length === 2);
  for (const h of w.handed) h.socket.destroy();
});

test('close: what waits is handed to the workers still taking connections, then each is told none follows', async (t: TestContext) => {
  const { distributor, port, worker: w } = await oneBusyWorker(t, { targetMs: 60_000, intervalMs: 60_000 });
  client(port);
  client(port);
  await new Promise((r) => setTimeout(r, 20));
  const closed = distributor.close();
  for (let i = 1; i <= 2 && w.handed.length < 3; i++) {
    distributor.acked(asWorker(w), true);
    await until(() => w.handed.length >= i + 1);
  }
  await closed;
  const last = w.messages.at(-1) as { type: string };
  t.assert.strictEqual(last.type, 'flotilla:handoff-end');
  // the listener is closed: a new connection is refused
  const refused = connect({ host: '127.0.0.1', port });
  const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
  t.assert.strictEqual(error.code, 'ECONNREFUSED');
  for (const h of w.handed) h.socket.destroy();
});

test('a retiring worker is handed nothing more, and is told so', async (t: TestContext) => {
  const { distributor } = start(t);
  const { port } = await distributor.listen('127.0.0.1', 0);
  const [a, b] = [new FakeWorker(), new FakeWorker()];
  distributor.add(asWorker(a));
  distributor.add(asWorker(b));
  distributor.retire(asWorker(a));
  t.assert.strictEqual((a.messages.at(-1) as { type: string }).type, 'flotilla:handoff-end');
  for (let i = 0; i < 3; i++) {
    client(port);
    await until(() => b.handed.length === i + 1);
    distributor.acked(asWorker(b), true);
  }
  t.assert.strictEqual(a.handed.length, 0);
  for (const h of b.handed) h.socket.destroy();
});

test('a worker that comes up after the close is told at once that no connection follows', async (t: TestContext) => {
  const { distributor } = start(t);
  await distributor.listen('127.0.0.1', 0);
  await distributor.close();
  const late = new FakeWorker();
  distributor.add(asWorker(late));
  t.assert.deepStrictEqual(
    late.messages.map((m) => (m as { type: string }).type),
    ['flotilla:handoff-end'],
  );
});

test('a readiness probe waiting in the queue leaves it first and is never shed', async (t: TestContext) => {
  const { distributor, counts, port, worker: w } = await oneBusyWorker(t, { targetMs: 5, intervalMs: 10 });
  const shed = client(port, '/work');
  client(port, '/health');
  // the standing queue sheds /work; /health waits for the worker
  await shed.reply;
  await new Promise((r) => setTimeout(r, 30));
  t.assert.strictEqual(counts.queue, 1);
  distributor.acked(asWorker(w), true);
  await until(() => w.handed.length === 2);
  t.assert.match((w.handed[1] as Handed).head.toString('latin1'), /^GET \/health HTTP\/1\.1\r\n/);
  for (const h of w.handed) h.socket.destroy();
});
