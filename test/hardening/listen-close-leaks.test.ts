import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KConfig } from '../../src/config/types.ts';
import { controller, testApp } from '../helpers/app.ts';
import { httpRequest, openSocket, readUntil } from '../helpers/http.ts';

/**
 * 100 listen()/close() cycles — each a new App (an App listens once), serving
 * a request and holding an idle keep-alive connection when it closes — leave
 * no handle behind (servers, sockets, timers: `process.getActiveResourcesInfo()`),
 * no signal listener, and no heap growth beyond noise after a forced GC.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CYCLES = 100;
/** Noise measured at about 0.2 MB per 100 cycles; the leak this guards against (default metrics per App) was 1.8 MB. */
const HEAP_NOISE = 1024 * 1024;

async function cycle(config: KConfig, handleSignals: boolean): Promise<void> {
  const { app } = testApp({ logging: { level: 'silent' }, ...config }, { handleSignals });
  app.registerController(controller({ method: 'GET', path: '/ok', handler: () => ({ ok: true }) }));
  app.onShutdown(() => {});
  const listening = app.listen();
  const { port } = await app.ready();
  assert.equal((await httpRequest(port, '/ok')).status, 200);
  const idle = await openSocket(port);
  idle.on('error', () => {});
  idle.write('GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await readUntil(idle, '{"ok":true}');
  const closed = new Promise((resolve) => idle.once('close', resolve));
  await app.close();
  await listening;
  await closed;
}

/** Active resources by type, after letting closed handles go. */
async function resources(): Promise<Record<string, number>> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const variants: { name: string; config: KConfig; handleSignals: boolean }[] = [
  { name: 'a plain App', config: {}, handleSignals: false },
  { name: 'an App trapping SIGINT/SIGTERM', config: {}, handleSignals: true },
  { name: 'an App serving its own metrics', config: { metrics: { host: '127.0.0.1', port: 0 } }, handleSignals: false },
];

for (const v of variants) {
  test(`${CYCLES} listen/close cycles of ${v.name} leave no handle, listener or heap behind`, async () => {
    for (let i = 0; i < 10; i++) await cycle(v.config, v.handleSignals);
    const before = await resources();
    const listeners = { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') };
    const heap = heapAfterGc();
    for (let i = 0; i < CYCLES; i++) await cycle(v.config, v.handleSignals);
    assert.deepEqual(await resources(), before);
    assert.deepEqual({ SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') }, listeners);
    const grown = heapAfterGc() - heap;
    assert.ok(grown < HEAP_NOISE, `the heap grew by ${Math.round(grown / 1024)} KiB over ${CYCLES} cycles`);
  });
}
