import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import type { AppOptions } from '../../../src/app/app-options.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { controller, gate, testApp } from '../../helpers/app.ts';
import { connectionRefused, httpRequest, openSocket, readUntil, readUntilClose } from '../../helpers/http.ts';

/** A listening App with `GET /slow`, which waits for the test to release it. */
async function slowApp(config: KConfig = {}, options: AppOptions = {}) {
  const { app, logs } = testApp({ shutdown: { timeoutMs: 300 }, ...config }, options);
  const entered = gate();
  const release = gate();
  app.registerController(
    controller({
      method: 'GET',
      path: '/slow',
      handler: async () => {
        entered.resolve();
        await release.promise;
        return { finished: true };
      },
    }),
  );
  const listening = app.listen();
  const { port } = await app.ready();
  return { app, logs, port, entered, release, listening };
}

const phases = (lines: Record<string, unknown>[]) => lines.filter((l) => typeof l['phase'] === 'string').map((l) => l['phase']);

describe('shutdown sequence', () => {
  test('stops accepting, lets the in-flight request finish with 200, then runs the hooks in order with one signal', async () => {
    const { app, logs, port, entered, release, listening } = await slowApp({ shutdown: { timeoutMs: 5_000 } });
    const inFlight = httpRequest(port, '/slow');
    await entered.promise;

    const signals: AbortSignal[] = [];
    const order: string[] = [];
    app.onShutdown(async (signal) => {
      order.push('first');
      signals.push(signal);
      await Promise.resolve();
    });
    app.onShutdown((signal) => {
      order.push('second');
      signals.push(signal);
    });
    app.onShutdown(async (signal) => {
      order.push(`third refused:${await connectionRefused(port)}`);
      signals.push(signal);
    });

    const closing = app.close();
    assert.equal(await connectionRefused(port), true, 'new connections are refused as soon as the listener closes');
    assert.deepEqual(order, [], 'no hook runs while a request is in flight');

    release.resolve();
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { finished: true });
    assert.equal(res.headers['connection'], 'close');

    await closing;
    await listening;
    assert.deepEqual(order, ['first', 'second', 'third refused:true']);
    assert.equal(signals.length, 3);
    assert.ok(
      signals.every((s) => s === signals[0]),
      'the hooks share one signal',
    );
    assert.equal(signals[0]?.aborted, false, 'the signal aborts only when the budget is spent');
    assert.deepEqual(phases(logs.lines), ['drain', 'close-listener', 'finish-in-flight', 'hook', 'hook', 'hook', 'destroy', 'done']);
    assert.equal(app.cleanShutdown, true);
  });

  test('idle keep-alive connections are closed', async () => {
    const { app, listening, port } = await slowApp();
    const socket = await openSocket(port);
    const closed = readUntilClose(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await readUntil(socket, '"checks":{}}');
    await app.close();
    await closed;
    assert.equal(socket.destroyed, true);
    await listening;
  });

  test('a keep-alive connection with a request in flight gets its answer with Connection: close, then is closed', async () => {
    const { app, listening, port, entered, release } = await slowApp({ shutdown: { timeoutMs: 5_000 } });
    const socket = await openSocket(port);
    const all = readUntilClose(socket);
    socket.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await entered.promise;
    const closing = app.close();
    release.resolve();
    const text = await all;
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nConnection: close\r\n/);
    assert.match(text, /\{"finished":true\}$/);
    await closing;
    await listening;
  });

  test('the shared signal aborts at the budget, and a hook that never finishes does not hold shutdown past it', async () => {
    const { app, logs, listening } = await slowApp();
    const reasons: unknown[] = [];
    let skippedRan = false;
    app.onShutdown((signal) => {
      signal.addEventListener('abort', () => reasons.push(signal.reason));
      return new Promise(() => {});
    });
    app.onShutdown(() => {
      skippedRan = true;
    });
    const started = performance.now();
    await app.close();
    await listening;
    assert.ok(performance.now() - started < 3_000, 'close() resolves soon after the 300 ms budget');
    assert.equal(reasons.length, 1);
    assert.match(String((reasons[0] as Error).message), /shutdown budget of 300 ms spent/);
    assert.equal(skippedRan, false, 'hooks after the deadline are skipped');
    const skipped = await logs.waitFor((l) => l['msg'] === 'shutdown hook skipped: the budget is spent');
    assert.equal(skipped['hook'], 1);
    assert.equal(app.cleanShutdown, false);
  });

  test('close({ deadline }) ends the budget at that time when it comes first (a worker gets the primary’s)', async () => {
    const { app, listening } = await slowApp({ shutdown: { timeoutMs: 60_000 } });
    const reasons: unknown[] = [];
    app.onShutdown((signal) => {
      signal.addEventListener('abort', () => reasons.push(signal.reason));
      return new Promise(() => {});
    });
    const started = performance.now();
    await app.close({ deadline: Date.now() + 200 });
    await listening;
    assert.ok(performance.now() - started < 5_000, 'not the 60 s budget');
    assert.equal(reasons.length, 1);
    assert.match(String((reasons[0] as Error).message), /shutdown budget of (19\d|200) ms spent/);
    assert.equal(app.cleanShutdown, false);
  });

  test('a hook that honours the signal ends when the budget is spent', async () => {
    const { app, listening } = await slowApp();
    let sawAbort = false;
    app.onShutdown(async (signal) => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      sawAbort = signal.aborted;
    });
    await app.close();
    await listening;
    assert.equal(sawAbort, true);
  });

  test('a failing hook is logged and the later hooks still run', async () => {
    const { app, logs, listening } = await slowApp();
    const ran: string[] = [];
    app.onShutdown(() => {
      ran.push('first');
      throw new Error('pool.end() failed');
    });
    app.onShutdown(async () => {
      ran.push('second');
      throw new Error('async failure');
    });
    app.onShutdown(() => {
      ran.push('third');
    });
    await app.close();
    await listening;
    assert.deepEqual(ran, ['first', 'second', 'third']);
    const failures = logs.lines.filter((l) => l['msg'] === 'shutdown hook failed');
    assert.deepEqual(
      failures.map((l) => [l['level'], l['hook'], (l['err'] as { message: string }).message]),
      [
        ['error', 0, 'pool.end() failed'],
        ['error', 1, 'async failure'],
      ],
    );
    assert.equal(app.cleanShutdown, false);
  });

  test('a request still in flight at the deadline is cut off, and shutdown completes', async () => {
    const { app, listening, port, entered } = await slowApp();
    const inFlight = httpRequest(port, '/slow').then(
      (res) => res.status,
      (error: NodeJS.ErrnoException) => error.code,
    );
    await entered.promise;
    let hookRan = false;
    app.onShutdown(() => {
      hookRan = true;
    });
    const started = performance.now();
    await app.close();
    await listening;
    assert.ok(performance.now() - started < 3_000);
    assert.equal(await inFlight, 'ECONNRESET');
    assert.equal(hookRan, false, 'the budget was spent waiting for the request');
    assert.equal(app.cleanShutdown, false);
  });

  test('a retiring App (stayReady) closes keep-alive connections with their next response', async () => {
    // a rolling restart's old worker: its clients must learn from the response in flight to leave, not from a
    // close right after it (which a request they send on the reused connection meets: lost)
    const { app, port, entered, release, listening } = await slowApp({ shutdown: { timeoutMs: 5_000 } });
    const socket = await openSocket(port);
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await entered.promise;
    const closing = app.close({ stayReady: true });
    assert.equal((await httpRequest(port, '/health').catch(() => ({ status: 0 }))).status, 0, 'the listener is closed');
    release.resolve();
    const answer = await readUntilClose(socket);
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    await closing;
    await listening;
  });

  test('a keep-alive connection idle at the drain is closed only after IDLE_CLOSE_MS of silence: a request sent meanwhile is answered', async () => {
    const { app, port, listening } = await slowApp({ shutdown: { timeoutMs: 5_000 } });
    const socket = await openSocket(port);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await readUntil(socket, '"status"');
    const closing = app.close({ stayReady: true });
    await new Promise((r) => setTimeout(r, 20));
    const rest = readUntilClose(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const answer = await rest;
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    await closing;
    await listening;
  });

  test('/health answers 503 while draining, before the listener closes (shutdown.drainDelayMs)', async () => {
    const { app, listening, port } = await slowApp({ shutdown: { timeoutMs: 5_000, drainDelayMs: 200 } });
    assert.equal((await httpRequest(port, '/health')).status, 200);
    const closing = app.close();
    const res = await httpRequest(port, '/health');
    assert.equal(res.status, 503);
    assert.equal(res.headers['content-type'], 'application/health+json');
    assert.equal(res.headers['connection'], 'close');
    assert.deepEqual(JSON.parse(res.body), { status: 'fail', checks: {}, output: 'shutting down' });
    await closing;
    await listening;
    assert.equal(await connectionRefused(port), true);
  });
  test('a listener of its own (reusePort) accepts what the kernel queued while the event loop was busy before closing', {
    skip: process.platform !== 'linux' && 'SO_REUSEPORT balances on Linux only',
  }, async () => {
    const { app, listening, port } = await slowApp({ shutdown: { timeoutMs: 2_000 } }, { reusePort: true });
    const answers = Array.from({ length: 8 }, () => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'));
      return new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
        });
        socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        socket.on('close', () => resolve(text));
      });
    });
    // net.connect to an IP address connects on the next tick; then the event loop stays busy while the
    // kernel completes the handshakes and queues the connections on the listener, which closes in the same turn
    await new Promise((resolve) => process.nextTick(resolve));
    const until = performance.now() + 100;
    while (performance.now() < until) {
      // busy: nothing is accepted meanwhile
    }
    const closing = app.close();
    // closing the listener would have reset them: they are answered, and their connections closed
    for (const answer of await Promise.all(answers)) assert.match(answer, /^HTTP\/1\.1 503 .*connection: close/is);
    await closing;
    await listening;
  });
});
