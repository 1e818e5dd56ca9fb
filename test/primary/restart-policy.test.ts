import { type TestContext, test } from 'node:test';
import pino from 'pino';
import type { WorkerRoutes } from '../../src/ipc/protocol.ts';
import { PrimaryMetrics } from '../../src/primary/primary-metrics.ts';
import { RestartPolicy } from '../../src/primary/restart-policy.ts';
import { sink } from '../helpers/sink.ts';

const POISON_ROUTES: WorkerRoutes = { inFlight: [], last: '/poison/:id' };
const POLICY = { initialMs: 100, maxMs: 1_000, stableAfterMs: 30_000, crashLoopFailures: 3, crashLoopWindowMs: 60_000 };

test('every failure is backed off, counted under its reason and logged once; the early ones end in a crash loop', async (t: TestContext) => {
  const logs = sink();
  const metrics = new PrimaryMetrics();
  let gaveUp = 0;
  const restarts = new RestartPolicy(POLICY, pino(logs), metrics, () => gaveUp++);
  const early = {
    slot: 1,
    reason: 'crash',
    upForMs: 0,
    level: 'warn',
    message: 'worker exited unexpectedly: replacing it',
    fields: {},
  } as const;

  const delay = restarts.failed(early);
  t.assert.ok(delay !== undefined && delay >= 50 && delay <= 100, `first delay ${delay}`);
  t.assert.strictEqual(restarts.failed({ ...early, reason: 'heartbeat-timeout', now: true }), 0, 'a stuck worker is replaced at once');
  t.assert.notStrictEqual(restarts.failed({ ...early, upForMs: POLICY.stableAfterMs }), undefined, 'a stable worker never makes a loop');
  t.assert.strictEqual(gaveUp, 0);
  t.assert.strictEqual(restarts.failed(early), undefined, 'the third early failure in the window');
  t.assert.strictEqual(gaveUp, 1);

  const text = await metrics.registry.metrics();
  t.assert.match(text, /^flotilla_worker_restarts_total\{reason="crash"\} 2$/m, 'the failure that ended it is not a restart');
  t.assert.match(text, /^flotilla_worker_restarts_total\{reason="heartbeat-timeout"\} 1$/m);
  const lines = logs.lines.map((l) => [l['level'], l['msg'], l['slot']]);
  t.assert.strictEqual(lines.length, 4);
  t.assert.deepStrictEqual(lines.at(-1), [60, 'workers keep failing early: giving up (crash loop)', 1]);
  t.assert.strictEqual(logs.lines[1]?.['delayMs'], 0);
});

test('young workers that died on requests are replaced, never a crash loop; the route that keeps killing them is named', async (t: TestContext) => {
  const logs = sink();
  const metrics = new PrimaryMetrics();
  let gaveUp = 0;
  const restarts = new RestartPolicy(POLICY, pino(logs), metrics, () => gaveUp++);
  const onRequest = {
    slot: 0,
    reason: 'uncaught-exception',
    upForMs: 20,
    level: 'warn',
    message: 'worker exited unexpectedly: replacing it',
    fields: {},
    receivedRequests: true,
    routes: POISON_ROUTES,
  } as const;

  for (let i = 0; i < 10; i++) t.assert.notStrictEqual(restarts.failed(onRequest), undefined, `death ${i + 1} on a request`);
  t.assert.notStrictEqual(restarts.failed({ ...onRequest, routes: undefined }), undefined, 'a death naming no route');
  t.assert.strictEqual(gaveUp, 0);

  const deaths = logs.lines.filter((l) => l['msg'] === 'worker exited unexpectedly: replacing it');
  t.assert.strictEqual(deaths.length, 11);
  t.assert.deepStrictEqual(
    [deaths[0]?.['receivedRequests'], deaths[0]?.['inFlightRoutes'], deaths[0]?.['lastRoute']],
    [true, [], '/poison/:id'],
    'the death line names what the worker was serving',
  );
  const poison = logs.lines.filter((l) => typeof l['msg'] === 'string' && l['msg'].includes('it looks like a poison request'));
  t.assert.strictEqual(poison.length, 1, 'one line for the storm, not one per death');
  t.assert.deepStrictEqual([poison[0]?.['level'], poison[0]?.['route'], poison[0]?.['deaths']], [50, '/poison/:id', 3]);

  const text = await metrics.registry.metrics();
  t.assert.match(text, /^flotilla_worker_restarts_total\{reason="uncaught-exception"\} 11$/m);
  t.assert.match(text, /^flotilla_worker_request_deaths_total\{route="\/poison\/:id"\} 10$/m);
  t.assert.match(text, /^flotilla_worker_request_deaths_total\{route="unknown"\} 1$/m);

  // boot failures still add up to a crash loop, whatever deaths on requests came between
  const early = { ...onRequest, reason: 'crash', receivedRequests: false, routes: undefined };
  t.assert.notStrictEqual(restarts.failed(early), undefined);
  t.assert.notStrictEqual(restarts.failed({ ...early, upForMs: 0, reason: 'boot-failure' }), undefined);
  t.assert.strictEqual(restarts.failed(early), undefined, 'the third boot failure in the window');
  t.assert.strictEqual(gaveUp, 1);
});
