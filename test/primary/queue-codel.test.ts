import { type TestContext, test } from 'node:test';
import { QueueCoDel } from '../../src/primary/queue-codel.ts';

test('a burst shorter than the interval waits; a standing queue drops until it empties', (t: TestContext) => {
  const codel = new QueueCoDel({ targetMs: 20, intervalMs: 100 });
  // the oldest has waited 30 ms (above the 20 ms target) at 1030: not yet for an interval
  t.assert.strictEqual(codel.dropping(1_030, 1_000), false);
  t.assert.strictEqual(codel.dropping(1_100, 1_000), false);
  // above the target since 1030, for 100 ms at 1130: dropping
  t.assert.strictEqual(codel.dropping(1_130, 1_000), true);
  // while dropping, a young oldest keeps it dropping until the queue empties
  t.assert.strictEqual(codel.dropping(1_140, 1_135), true);
  codel.emptied(1_150);
  t.assert.strictEqual(codel.dropping(1_160, 1_155), false);
});

test("CoDel's memory: a queue that stands again within 4 intervals drops at once", (t: TestContext) => {
  const codel = new QueueCoDel({ targetMs: 20, intervalMs: 100 });
  codel.dropping(1_030, 1_000);
  t.assert.strictEqual(codel.dropping(1_130, 1_000), true);
  codel.emptied(1_200);
  t.assert.strictEqual(codel.dropping(1_500, 1_470), true, '300 ms after the spell: at once');
  codel.emptied(1_510);
  t.assert.strictEqual(codel.dropping(2_000, 1_970), false, '490 ms after: a new interval to wait');
});

test('force drops at once (the shutdown: what waits past the target is answered)', (t: TestContext) => {
  const codel = new QueueCoDel({ targetMs: 20, intervalMs: 100 });
  t.assert.strictEqual(codel.dropping(1_030, 1_000, true), true);
});

test("limits for this call (the workers' warm-up): a queue above them must stand longer", (t: TestContext) => {
  const codel = new QueueCoDel({ targetMs: 20, intervalMs: 100 });
  const warm = { targetMs: 200, intervalMs: 500 };
  t.assert.strictEqual(codel.dropping(1_150, 1_000, false, warm), false, 'waited 150 ms: under the 200 ms target');
  t.assert.strictEqual(codel.dropping(1_201, 1_000, false, warm), false, 'above the target from 1201 on');
  t.assert.strictEqual(codel.dropping(1_650, 1_000, false, warm), false, 'stood 449 ms: under the 500 ms interval');
  t.assert.strictEqual(codel.dropping(1_701, 1_000, false, warm), true);
});
