import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { PrimaryMetrics } from '../../src/primary/primary-metrics.ts';
import { RestartPolicy } from '../../src/primary/restart-policy.ts';
import { sink } from '../helpers/sink.ts';

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
