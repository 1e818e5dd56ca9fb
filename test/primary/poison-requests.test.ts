import { type TestContext, test } from 'node:test';
import { POISON_DEATHS, PoisonRequests, suspectRoutes } from '../../src/primary/poison-requests.ts';

const WINDOW_MS = 60_000;

test('the routes in flight are blamed, else the last one that ended, else none', (t: TestContext) => {
  t.assert.deepStrictEqual(suspectRoutes({ inFlight: ['/a', '/b'], last: '/c' }), ['/a', '/b']);
  t.assert.deepStrictEqual(suspectRoutes({ inFlight: [], last: '/c' }), ['/c']);
  t.assert.deepStrictEqual(suspectRoutes({ inFlight: [], last: '' }), []);
  t.assert.deepStrictEqual(suspectRoutes(undefined), []);
});

test(`a route blamed for ${POISON_DEATHS} deaths within the window is reported once, with its count`, (t: TestContext) => {
  const poison = new PoisonRequests(WINDOW_MS);
  t.assert.deepStrictEqual(poison.died(0, ['/poison']), []);
  t.assert.deepStrictEqual(poison.died(1_000, ['/poison', '/other']), []);
  t.assert.deepStrictEqual(poison.died(2_000, ['/poison']), [{ route: '/poison', deaths: 3, windowMs: WINDOW_MS }]);
  t.assert.deepStrictEqual(poison.died(3_000, ['/poison']), [], 'already reported within the window');
  t.assert.deepStrictEqual(poison.died(4_000, ['/other']), [], 'two deaths blamed on /other');
  t.assert.deepStrictEqual(poison.died(5_000, ['/other', '/other']), [{ route: '/other', deaths: 3, windowMs: WINDOW_MS }]);
});

test('deaths spread wider than the window never make a poison request; a route still killing is reported again', (t: TestContext) => {
  const spread = new PoisonRequests(WINDOW_MS);
  const reports = Array.from({ length: 20 }, (_, i) => spread.died(i * (WINDOW_MS / 2), ['/sometimes'])).flat();
  t.assert.deepStrictEqual(reports, []);

  const poison = new PoisonRequests(WINDOW_MS);
  for (const now of [0, 1, 2]) poison.died(now, ['/poison']);
  const later = [WINDOW_MS + 2, WINDOW_MS + 3, WINDOW_MS + 4].map((now) => poison.died(now, ['/poison']).length);
  t.assert.deepStrictEqual(later, [0, 0, 1], 'three fresh deaths a window later');
});
