import type { Worker } from 'node:cluster';
import { type TestContext, test } from 'node:test';
import { WarmUp } from '../../src/primary/warm-up.ts';

const worker = () => ({}) as Worker;

test('a worker warms up from its fork to the end of its first second of connections', (t: TestContext) => {
  const warmUp = new WarmUp(1_000);
  const a = worker();
  t.assert.strictEqual(warmUp.warming(0, []), false, 'no worker: nothing warms up');
  warmUp.forked(a);
  t.assert.strictEqual(warmUp.warming(0, []), true, 'forked, not yet up');
  warmUp.up(a);
  t.assert.strictEqual(warmUp.warming(5_000, [a]), true, 'up, never handed a connection');
  warmUp.handed(a, 10_000);
  warmUp.handed(a, 10_500);
  t.assert.strictEqual(warmUp.warming(10_900, [a]), true, 'within a second of its first connection');
  t.assert.strictEqual(warmUp.warming(11_000, [a]), false, 'a second after its first connection');
  t.assert.strictEqual(warmUp.warming(11_000, []), false, 'a worker not taking connections does not count');
});

test('a worker gone before it came up warms nothing; a warm-up of 0 never warms', (t: TestContext) => {
  const warmUp = new WarmUp(1_000);
  const a = worker();
  warmUp.forked(a);
  warmUp.gone(a);
  t.assert.strictEqual(warmUp.warming(0, []), false);
  const none = new WarmUp(0);
  none.forked(a);
  t.assert.strictEqual(none.warming(0, [a]), false);
});

test('while a worker warms up, the queue deadline is the larger of the configured one and 200 / 500 ms', (t: TestContext) => {
  const warmUp = new WarmUp(1_000);
  const a = worker();
  const configured = { targetMs: 20, intervalMs: 100 };
  warmUp.up(a);
  warmUp.handed(a, 0);
  t.assert.deepStrictEqual(warmUp.limits(500, [a], configured), { targetMs: 200, intervalMs: 500 });
  t.assert.deepStrictEqual(warmUp.limits(500, [a], { targetMs: 300, intervalMs: 50 }), { targetMs: 300, intervalMs: 500 });
  t.assert.strictEqual(warmUp.limits(1_000, [a], configured), configured, 'warm: the configured deadline');
});
