import { describe, type TestContext, test } from 'node:test';
import fc from 'fast-check';
import { Backoff, type BackoffPolicy } from '../../src/primary/backoff.ts';

const POLICY: BackoffPolicy = {
  initialMs: 100,
  maxMs: 5_000,
  stableAfterMs: 30_000,
  crashLoopFailures: 5,
  crashLoopWindowMs: 60_000,
};

/** `random` at its top: no jitter taken off, so delays are the exponential itself. */
const noJitter = () => 1;

/** Delays of `n` failures of workers that never came up, `gapMs` apart. */
function delays(backoff: Backoff, n: number, gapMs = 100_000): number[] {
  return Array.from({ length: n }, (_, i) => backoff.fail(i * gapMs, 0).delayMs);
}

describe('Backoff', () => {
  test('doubles the delay after each consecutive failure, from initialMs', (t: TestContext) => {
    t.assert.deepStrictEqual(delays(new Backoff(POLICY, noJitter), 6), [100, 200, 400, 800, 1_600, 3_200]);
  });

  test('caps the delay at maxMs', (t: TestContext) => {
    t.assert.deepStrictEqual(delays(new Backoff(POLICY, noJitter), 10).slice(5), [3_200, 5_000, 5_000, 5_000, 5_000]);
    const many = delays(new Backoff(POLICY, noJitter), 200);
    t.assert.strictEqual(many.at(-1), 5_000, 'no overflow after many failures');
  });

  test('jitter keeps every delay between half and all of the exponential delay', (t: TestContext) => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 12 }), (draws) => {
        let i = 0;
        const backoff = new Backoff(POLICY, () => draws[i] ?? 0);
        for (; i < draws.length; i++) {
          const exponential = Math.min(POLICY.maxMs, POLICY.initialMs * 2 ** i);
          const { delayMs } = backoff.fail(i * 100_000, 0);
          t.assert.ok(delayMs >= exponential / 2 && delayMs <= exponential, `${delayMs} outside [${exponential / 2}, ${exponential}]`);
        }
      }),
    );
    t.assert.strictEqual(new Backoff(POLICY, () => 0).fail(0, 0).delayMs, 50, 'the lowest draw halves the delay');
  });

  test('starts again from initialMs once a worker stayed up for stableAfterMs', (t: TestContext) => {
    const backoff = new Backoff(POLICY, noJitter);
    t.assert.deepStrictEqual(delays(backoff, 3), [100, 200, 400]);
    t.assert.strictEqual(backoff.fail(400_000, POLICY.stableAfterMs - 1).delayMs, 800, 'not stable yet: keeps growing');
    t.assert.strictEqual(backoff.fail(500_000, POLICY.stableAfterMs).delayMs, 100, 'stable: back to the start');
    t.assert.strictEqual(backoff.fail(600_000, 0).delayMs, 200);
  });

  test('reports a crash loop at crashLoopFailures failures within the window', (t: TestContext) => {
    const backoff = new Backoff(POLICY, noJitter);
    const loops = [0, 1_000, 2_000, 3_000, 4_000].map((now) => backoff.fail(now, 0).crashLoop);
    t.assert.deepStrictEqual(loops, [false, false, false, false, true]);
  });

  test('forgets failures older than the window, even from workers that were up', (t: TestContext) => {
    const backoff = new Backoff(POLICY, noJitter);
    for (const now of [0, 10_000, 20_000, 30_000]) t.assert.strictEqual(backoff.fail(now, 0).crashLoop, false);
    // the failure at 0 has left the window: four failures in it, not five
    t.assert.strictEqual(backoff.fail(POLICY.crashLoopWindowMs, 0).crashLoop, false);
    t.assert.strictEqual(backoff.fail(POLICY.crashLoopWindowMs + 1, 0).crashLoop, true);
    // failures spread wider than the window never add up to a loop
    const spread = new Backoff(POLICY, noJitter);
    const loops = Array.from({ length: 20 }, (_, i) => spread.fail(i * (POLICY.crashLoopWindowMs / 4), 60_000).crashLoop);
    t.assert.ok(loops.every((l) => !l));
  });

  test('a worker that was stable never counts towards the crash loop', (t: TestContext) => {
    const backoff = new Backoff({ ...POLICY, crashLoopFailures: 2 }, noJitter);
    const loops = Array.from({ length: 50 }, (_, i) => backoff.fail(i, POLICY.stableAfterMs).crashLoop);
    t.assert.ok(
      loops.every((l) => !l),
      'fifty deaths of stable workers within a second: no crash loop',
    );
    t.assert.strictEqual(backoff.fail(100, 0).crashLoop, false, 'one early death');
    t.assert.strictEqual(backoff.fail(101, POLICY.stableAfterMs - 1).crashLoop, true, 'a second early death: a loop');
  });
});

describe('Backoff: only boot failures make a crash loop', () => {
  test('a young worker that received requests never counts, however many die', (t: TestContext) => {
    const backoff = new Backoff({ ...POLICY, crashLoopFailures: 2 }, noJitter);
    const loops = Array.from({ length: 50 }, (_, i) => backoff.fail(i, 10, true).crashLoop);
    t.assert.ok(
      loops.every((l) => !l),
      'fifty deaths on requests within a second, each worker up for 10 ms: no crash loop',
    );
  });

  test('a young worker that received no request counts, and so does one that never came up', (t: TestContext) => {
    const backoff = new Backoff({ ...POLICY, crashLoopFailures: 3 }, noJitter);
    t.assert.strictEqual(backoff.fail(0, 10, false).crashLoop, false, 'listened 10 ms, no request');
    t.assert.strictEqual(backoff.fail(1, 0, true).crashLoop, false, 'deaths on requests in between change nothing');
    t.assert.strictEqual(backoff.fail(2, 0).crashLoop, false, 'a boot failure');
    t.assert.strictEqual(backoff.fail(3, POLICY.stableAfterMs - 1).crashLoop, true, 'the third boot failure in the window');
  });

  test('deaths on requests are still backed off: the delay keeps growing until a worker is stable', (t: TestContext) => {
    const backoff = new Backoff(POLICY, noJitter);
    const grown = Array.from({ length: 8 }, (_, i) => backoff.fail(i, 10, true).delayMs);
    t.assert.deepStrictEqual(grown, [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
    t.assert.strictEqual(backoff.fail(9, POLICY.stableAfterMs, true).delayMs, 100, 'a stable worker resets it');
  });
});
