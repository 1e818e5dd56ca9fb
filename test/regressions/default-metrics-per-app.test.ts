import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { App } from '../../src/app/app.ts';
import { sink } from '../helpers/sink.ts';

/**
 * What broke: every App that collects process metrics (a cluster worker, or a
 * standalone App given `metrics`) called prom-client's `collectDefaultMetrics`
 * again, which adds a GC observer and an event-loop monitor that are never
 * removed: about 18 KB per App, held forever, and one more observer to run on
 * every GC. A test suite creating Apps leaked. The process metrics are now
 * collected once per process and shared by every App's registry.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

test('Apps with process metrics do not pile up collectors, and each still exposes them', async () => {
  const make = () =>
    new App({ metrics: { port: 0, host: '127.0.0.1' }, logging: { level: 'silent' } }, { logStream: sink(), handleSignals: false });
  for (let i = 0; i < 20; i++) make();
  const before = heapAfterGc();
  for (let i = 0; i < 300; i++) make();
  const grown = heapAfterGc() - before;
  assert.ok(grown < 1.5 * 1024 * 1024, `300 Apps kept ${Math.round(grown / 1024)} KiB`);
  for (const app of [make(), new App({}, { role: 'worker', processMetrics: true, logStream: sink(), handleSignals: false })]) {
    const text = await app.registry.metrics();
    assert.match(text, /^process_cpu_user_seconds_total \d/m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
  }
  const bare = new App({}, { logStream: sink(), handleSignals: false });
  assert.doesNotMatch(await bare.registry.metrics(), /process_cpu_user_seconds_total/);
});
