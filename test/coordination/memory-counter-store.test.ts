import { type TestContext, test } from 'node:test';
import { MemoryCounterStore } from '../../src/coordination/memory-counter-store.ts';

/** A store on a clock the test moves. */
function clocked() {
  const clock = { now: 1_000 };
  return { clock, store: new MemoryCounterStore(() => clock.now) };
}

test('a window starts with the first hit and counts every hit, past the limit too, with the time left', (t: TestContext) => {
  const { clock, store } = clocked();
  t.assert.deepStrictEqual(store.hit('a', 60_000), { count: 1, resetMs: 60_000 });
  clock.now += 15_000;
  t.assert.deepStrictEqual(store.hit('a', 60_000), { count: 2, resetMs: 45_000 });
  for (let i = 3; i <= 100; i++) t.assert.equal(store.hit('a', 60_000).count, i);
});

test('keys count apart', (t: TestContext) => {
  const { store } = clocked();
  store.hit('a', 1_000);
  store.hit('a', 1_000);
  t.assert.equal(store.hit('b', 1_000).count, 1);
  t.assert.equal(store.hit('a', 1_000).count, 3);
});

test('a fixed window: its end does not move with later hits, and the next hit after it starts a new one at 1', (t: TestContext) => {
  const { clock, store } = clocked();
  store.hit('a', 10_000);
  clock.now += 9_999;
  t.assert.deepStrictEqual(store.hit('a', 10_000), { count: 2, resetMs: 1 });
  clock.now += 1;
  t.assert.deepStrictEqual(store.hit('a', 10_000), { count: 1, resetMs: 10_000 }, 'the window ended exactly then');
});

test('the edge of a fixed window: near twice the limit can pass within a short time across its end', (t: TestContext) => {
  const { clock, store } = clocked();
  const max = 5;
  const admitted = () => store.hit('a', 10_000).count <= max;
  t.assert.ok(admitted(), 'the first hit opens the window [1 000, 11 000)');
  clock.now = 10_900;
  let passed = 0;
  for (let i = 0; i < max; i++) if (admitted()) passed++;
  t.assert.equal(passed, max - 1, 'the rest of the window’s budget, at its end');
  clock.now = 11_000;
  for (let i = 0; i < max + 3; i++) if (admitted()) passed++;
  t.assert.equal(passed, 2 * max - 1, 'and a new window’s budget 100 ms later: the documented edge');
});

test('ended windows are swept a few per hit, the live ones kept, with no timer', (t: TestContext) => {
  const { clock, store } = clocked();
  for (let i = 0; i < 100; i++) store.hit(`short${i}`, 500);
  for (let i = 0; i < 10; i++) store.hit(`long${i}`, 60_000);
  t.assert.equal(store.size, 110);
  clock.now += 1_000;
  store.hit('fresh', 60_000);
  t.assert.ok(store.size > 100, 'one hit pays for a few entries only');
  for (let i = 0; i < 40; i++) store.hit('fresh', 60_000);
  t.assert.equal(store.size, 11, 'the ended windows are gone, the 10 running ones and the fresh one kept');
  t.assert.equal(store.hit('long3', 60_000).count, 2, 'a running window keeps its count');
});

test('close empties it', async (t: TestContext) => {
  const { store } = clocked();
  store.hit('a', 1_000);
  await store.close();
  t.assert.equal(store.size, 0);
});

test('release takes a request back from a running window, never below zero, and leaves an ended one alone', (t: TestContext) => {
  const { clock, store } = clocked();
  store.hit('a', 10_000);
  store.hit('a', 10_000);
  store.release('a');
  t.assert.equal(store.hit('a', 10_000).count, 2);
  for (let i = 0; i < 5; i++) store.release('a');
  t.assert.equal(store.hit('a', 10_000).count, 1, 'never below zero');
  store.release('none');
  t.assert.equal(store.size, 1, 'a release makes no window');
  clock.now += 10_000;
  store.release('a');
  t.assert.deepStrictEqual(store.hit('a', 10_000), { count: 1, resetMs: 10_000 }, 'a new window');
});
