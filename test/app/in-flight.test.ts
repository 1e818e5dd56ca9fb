import { type TestContext, test } from 'node:test';
import { InFlight } from '../../src/app/in-flight.ts';

test('counts the requests in flight and wakes idle() once none is left', async (t: TestContext) => {
  const inFlight = new InFlight();
  const a = { route: '/a' };
  const b = { route: '/b' };
  inFlight.enter(a);
  inFlight.enter(b);
  t.assert.strictEqual(inFlight.count, 2);
  let idle = false;
  const waiting = inFlight.idle().then(() => {
    idle = true;
  });
  inFlight.leave(a);
  await Promise.resolve();
  t.assert.strictEqual(idle, false, 'one request is still in flight');
  inFlight.leave(b);
  await waiting;
  t.assert.strictEqual(inFlight.count, 0);
});

test('names the routes in flight, once each, and the last one to end', (t: TestContext) => {
  const inFlight = new InFlight();
  t.assert.deepStrictEqual(inFlight.routes(), { inFlight: [], last: '' }, 'nothing served yet');
  const first = { route: '/books/:id' };
  const second = { route: '/books/:id' };
  const unrouted = { route: '' };
  inFlight.enter(first);
  inFlight.enter(second);
  inFlight.enter(unrouted);
  t.assert.deepStrictEqual(inFlight.routes().inFlight.sort(), ['/books/:id', 'unmatched']);
  inFlight.leave(unrouted);
  inFlight.leave(first);
  t.assert.deepStrictEqual(inFlight.routes(), { inFlight: ['/books/:id'], last: '/books/:id' });
  inFlight.leave(second);
  t.assert.deepStrictEqual(inFlight.routes(), { inFlight: [], last: '/books/:id' });
});

test('a route set after the request entered (the router runs later) is the one named', (t: TestContext) => {
  const inFlight = new InFlight();
  const request = { route: '' };
  inFlight.enter(request);
  request.route = '/late';
  t.assert.deepStrictEqual(inFlight.routes().inFlight, ['/late']);
});
