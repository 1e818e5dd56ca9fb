import { describe, type TestContext, test } from 'node:test';
import fc from 'fast-check';
import {
  type Capacity,
  initialScaleState,
  type LoadSample,
  SCALE_DEFAULTS,
  type ScaleDecision,
  type ScalePolicy,
  scaleStep,
} from '../../src/primary/autoscale-rule.ts';

const MiB = 1_048_576;
const POLICY: ScalePolicy = { ...SCALE_DEFAULTS, min: 1, max: 2, scaleDownAfterMs: 1_000 };
const ROOMY: Capacity = { cpus: 2, memoryLimitBytes: undefined, memoryUsedBytes: 200 * MiB, workerRssBytes: 80 * MiB };

/** A reading: ms since the first worker listened, listening workers, mean utilisation, highest p99 delay. */
type Row = readonly [at: number, workers: number, elu: number, delayP99Ms: number];

/**
 * Recorded by test/integration/autoscaling.test.ts (`workers: { min: 1, max: 2 }`, `scaleDownAfterMs: 1000`,
 * 4 clients on `/busy?ms=5`, the primary's debug line `scaling reading`), `balancing: kernel`: one worker
 * saturated, the second one listening 1.35 s after the decision, then the load stopped and a trickle.
 */
const KERNEL_RUN: readonly Row[] = [
  [1540, 1, 0.985, 35.3],
  [2530, 1, 0.997, 19.1],
  [3530, 1, 0.976, 19.6],
  [4550, 1, 1, 24.8],
  [5530, 1, 0.989, 18.8],
  [6530, 1, 1, 19.0],
  [7530, 1, 0.997, 20.9],
  [8530, 1, 1, 19.0],
  [10530, 2, 0.919, 64.1],
  [11540, 2, 0.091, 12.8],
  [12540, 2, 0.068, 12.4],
  [13540, 2, 0.058, 12.3],
  [14540, 2, 0.055, 11.8],
  [15540, 2, 0.065, 12.4],
  [16540, 2, 0.056, 14.1],
  [17540, 2, 0.057, 13.4],
];

/** The same with `balancing: primary` (the new worker listening 1 s after the decision). */
const PRIMARY_RUN: readonly Row[] = [
  [2000, 1, 0.967, 53.6],
  [3020, 1, 0.979, 40.8],
  [4020, 1, 0.98, 24.5],
  [5010, 1, 0.985, 26.8],
  [6070, 1, 0.944, 47.3],
  [7020, 1, 0.883, 40.5],
  [8100, 1, 0.918, 34.5],
  [9020, 2, 0.381, 21.8],
  [10010, 2, 0.047, 15.8],
  [11010, 2, 0.043, 11.8],
  [12020, 2, 0.054, 13.3],
  [13010, 2, 0.056, 12.7],
  [14020, 2, 0.041, 12.0],
  [15010, 2, 0.043, 11.8],
  [16010, 2, 0.044, 21.2],
];

interface Replayed {
  at: number;
  decision: ScaleDecision;
}

/**
 * Folds the readings through the rule as the primary does: the pod starts with `start` workers at 0,
 * and a change is done `settleMs` after its decision (readings meanwhile are not taken), when the
 * cool-down starts.
 */
function replay(rows: readonly Row[], options: { policy?: ScalePolicy; capacity?: Capacity; start?: number; settleMs?: number } = {}) {
  const { policy = POLICY, capacity = ROOMY, start = 1, settleMs = 1_000 } = options;
  let state = initialScaleState(start, 0);
  let busyUntil = Number.NEGATIVE_INFINITY;
  const decisions: Replayed[] = [];
  for (const [at, workers, elu, delayP99Ms] of rows) {
    if (at < busyUntil) continue;
    const step = scaleStep(state, { at, workers, elu, delayP99Ms }, capacity, policy);
    state = step.state;
    if (step.decision.kind === 'none') continue;
    decisions.push({ at, decision: step.decision });
    if (step.decision.kind === 'scale') {
      busyUntil = at + settleMs;
      state = initialScaleState(step.decision.to, busyUntil);
    }
  }
  return decisions;
}

/** `n` readings a second apart from `from`, all alike. */
function steady(from: number, n: number, workers: number, elu: number, delayP99Ms = 5): Row[] {
  return Array.from({ length: n }, (_, i) => [from + i * 1_000, workers, elu, delayP99Ms] as const);
}

describe('the scaling rule on recorded series', () => {
  test('kernel balancing: saturated, one more worker; lightly used for scaleDownAfterMs, back to one', (t: TestContext) => {
    t.assert.deepStrictEqual(replay(KERNEL_RUN, { settleMs: 1_350 }), [
      // busy since the end of the start-up's cool-down (5 s), for 2.5 s
      { at: 7530, decision: { kind: 'scale', from: 1, to: 2, reason: 'busy' } },
      // the new worker listens at 8 880, the cool-down ends at 13 880: light since then, for 1 s
      { at: 15540, decision: { kind: 'scale', from: 2, to: 1, reason: 'light' } },
    ]);
  });

  test('primary balancing: the same two decisions, one each way', (t: TestContext) => {
    const decisions = replay(PRIMARY_RUN);
    t.assert.deepStrictEqual(
      decisions.map((d) => d.decision),
      [
        { kind: 'scale', from: 1, to: 2, reason: 'busy' },
        { kind: 'scale', from: 2, to: 1, reason: 'light' },
      ],
    );
  });

  test('the recorded saturation at max: held once, with the reason, and nothing else', (t: TestContext) => {
    const atMax = replay(KERNEL_RUN.slice(0, 8), { policy: { ...POLICY, max: 1 } });
    t.assert.deepStrictEqual(atMax, [{ at: 7530, decision: { kind: 'held', by: 'max' } }]);
    const oneCpu = replay(KERNEL_RUN.slice(0, 8), { capacity: { ...ROOMY, cpus: 1 } });
    t.assert.deepStrictEqual(oneCpu, [{ at: 7530, decision: { kind: 'held', by: 'cpus' } }]);
  });
});

describe('the scaling rule', () => {
  test('busy means the utilisation at upElu or more, or an event-loop delay at upDelayMs or more', (t: TestContext) => {
    t.assert.equal(replay(steady(6_000, 4, 1, 0.74)).length, 0, 'just below: nothing');
    t.assert.equal(replay(steady(6_000, 4, 1, 0.75)).length, 1);
    t.assert.equal(replay(steady(6_000, 4, 1, 0.4, 150)).length, 1, 'a late event loop is busy too');
  });

  test('one busy reading, or bursts shorter than upAfterMs, add nothing', (t: TestContext) => {
    t.assert.deepStrictEqual(replay(steady(6_000, 2, 1, 1)), []);
    // 2 s busy, 1 s quiet, over and over: never 2.5 s in a row
    const bursts = Array.from({ length: 30 }, (_, i) => [6_000 + i * 1_000, 1, i % 3 === 2 ? 0.1 : 1, 5] as const);
    t.assert.deepStrictEqual(replay(bursts), []);
  });

  test('a busy pod is not grown past its CPUs, nor past its memory limit with a margin', (t: TestContext) => {
    const busy = steady(6_000, 10, 2, 1);
    const policy = { ...POLICY, max: 8 };
    t.assert.deepStrictEqual(
      replay(busy, { start: 2, policy, capacity: { ...ROOMY, cpus: 2 } }).map((d) => d.decision),
      [{ kind: 'held', by: 'cpus' }],
    );
    const capacity = { ...ROOMY, cpus: 4, memoryUsedBytes: 300 * MiB, workerRssBytes: 100 * MiB };
    // 300 + 100 × 1.25 = 425 MiB: above a 420 MiB limit, within a 430 MiB one
    t.assert.deepStrictEqual(
      replay(busy, { start: 2, policy, capacity: { ...capacity, memoryLimitBytes: 420 * MiB } }).map((d) => d.decision),
      [{ kind: 'held', by: 'memory' }],
    );
    t.assert.deepStrictEqual(
      replay(busy, { start: 2, policy, capacity: { ...capacity, memoryLimitBytes: 430 * MiB } }).map((d) => d.decision)[0],
      { kind: 'scale', from: 2, to: 3, reason: 'busy' },
    );
  });

  test('a hold is told again once a new run of busy readings is held', (t: TestContext) => {
    const rows = [...steady(6_000, 5, 1, 1), [11_000, 1, 0.2, 1] as const, ...steady(12_000, 5, 1, 1)];
    t.assert.deepStrictEqual(
      replay(rows, { policy: { ...POLICY, max: 1 } }).map((d) => d.at),
      [9_000, 14_000],
    );
  });

  test('light means the workers would stay below downElu with one fewer; never below min', (t: TestContext) => {
    const policy = { ...POLICY, max: 4, scaleDownAfterMs: 5_000 };
    // 2 workers at 0.3 would be 1 at 0.6: not light
    t.assert.deepStrictEqual(replay(steady(6_000, 20, 2, 0.3), { start: 2, policy }), []);
    // 3 at 0.3 would be 2 at 0.45: light, one retired after 5 s
    t.assert.deepStrictEqual(replay(steady(6_000, 20, 3, 0.3), { start: 3, policy })[0], {
      at: 11_000,
      decision: { kind: 'scale', from: 3, to: 2, reason: 'light' },
    });
    // idle at min: nothing
    t.assert.deepStrictEqual(replay(steady(6_000, 20, 2, 0.01), { start: 2, policy: { ...policy, min: 2 } }), []);
  });

  test('readings within the cool-down after a change, or of no worker, count for nothing', (t: TestContext) => {
    t.assert.deepStrictEqual(replay(steady(0, 5, 1, 1)), [], 'the start-up is a change');
    t.assert.deepStrictEqual(replay(steady(6_000, 5, 0, 0)), []);
    const state = initialScaleState(1, 0);
    const step = scaleStep({ ...state, busySince: 6_000, lastAt: 8_000 }, { at: 9_000, workers: 0, elu: 0, delayP99Ms: 0 }, ROOMY, POLICY);
    t.assert.equal(step.state.busySince, undefined, 'a reading of no worker breaks the run');
  });

  test('never flaps: whatever the readings, a retirement never follows an addition closer than the cool-down plus scaleDownAfterMs', () => {
    const reading = fc.record({ gap: fc.integer({ min: 900, max: 2_600 }), elu: fc.double({ min: 0, max: 1, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(reading, { minLength: 1, maxLength: 200 }), (readings) => {
        const policy = { ...POLICY, max: 4 };
        let state = initialScaleState(1, 0);
        let at = 0;
        let last: { at: number; to: number } | undefined;
        for (const { gap, elu } of readings) {
          at += gap;
          const step = scaleStep(state, { at, workers: state.workers, elu, delayP99Ms: 0 }, { ...ROOMY, cpus: 4 }, policy);
          state = step.state;
          if (step.decision.kind !== 'scale') continue;
          const { to } = step.decision;
          if (to < 1 || to > 4) return false;
          if (last !== undefined && at - last.at < policy.coolDownMs) return false;
          if (last !== undefined && to < last.to && at - last.at < policy.coolDownMs + policy.scaleDownAfterMs) return false;
          last = { at, to };
        }
        return true;
      }),
    );
  });

  test('with the defaults, a pod saturated from any moment gets its next worker within 10 s', (t: TestContext) => {
    // heartbeat rounds: 2.5 s apart while idle, 1 s once an answer shows requests; the worker listens ~1.5 s after the decision
    const LISTEN_MS = 1_500;
    for (let start = 10_000; start < 12_500; start += 100) {
      let state = initialScaleState(1, 0);
      let at = 0;
      let decidedAt: number | undefined;
      while (decidedAt === undefined && at < start + 20_000) {
        const previous = at;
        at += previous < start ? 2_500 : 1_000;
        // the utilisation of the interval since the previous round: the share of it under load
        const elu = Math.min(1, Math.max(0, (at - Math.max(previous, start)) / (at - previous)));
        const sample: LoadSample = { at, workers: 1, elu: 0.01 + 0.98 * elu, delayP99Ms: elu > 0 ? 20 : 0 };
        const step = scaleStep(state, sample, ROOMY, { ...POLICY, scaleDownAfterMs: 60_000 });
        state = step.state;
        if (step.decision.kind === 'scale') decidedAt = at;
      }
      t.assert.ok(decidedAt !== undefined && decidedAt + LISTEN_MS - start <= 10_000, `load from ${start}: decided at ${decidedAt}`);
    }
  });
});
