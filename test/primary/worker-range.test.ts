import { type TestContext, test } from 'node:test';
import { countWithin, workerRange } from '../../src/primary/worker-range.ts';

test('a number or auto is a fixed count; { min, max } a range that scales, max: auto being the CPUs', (t: TestContext) => {
  t.assert.deepStrictEqual(workerRange(3, 8), { min: 3, max: 3, scales: false });
  t.assert.deepStrictEqual(workerRange('auto', 4), { min: 4, max: 4, scales: false });
  t.assert.deepStrictEqual(workerRange({ min: 1, max: 'auto' }, 4), { min: 1, max: 4, scales: true });
  t.assert.deepStrictEqual(workerRange({ min: 2, max: 6 }, 4), { min: 2, max: 6, scales: true });
  // more than the CPUs at its lowest: the range is min alone (the rule never adds past the CPUs anyway)
  t.assert.deepStrictEqual(workerRange({ min: 3, max: 'auto' }, 2), { min: 3, max: 3, scales: true });
});

test('a reload keeps the count the load chose while it is within the new range', (t: TestContext) => {
  t.assert.equal(countWithin({ min: 1, max: 4, scales: true }, 3), 3);
  t.assert.equal(countWithin({ min: 1, max: 2, scales: true }, 3), 2);
  t.assert.equal(countWithin({ min: 4, max: 6, scales: true }, 3), 4);
  t.assert.equal(countWithin({ min: 2, max: 2, scales: false }, 3), 2);
});
