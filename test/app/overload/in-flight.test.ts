import { type TestContext, test } from 'node:test';
import { DEADLINE, InFlight, SLOT } from '../../../src/app/overload/in-flight.ts';

/** A request as an App's `Ctx` carries it: its route and InFlight's fields. */
const tracked = (route: string) => ({ route, [SLOT]: -1, [DEADLINE]: 0 });

test('counts the requests in flight and wakes idle() once none is left', async (t: TestContext) => {
  const inFlight = new InFlight();
  const a = tracked('/a');
  const b = tracked('/b');
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
  const first = tracked('/books/:id');
  const second = tracked('/books/:id');
  const unrouted = tracked('');
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
  const request = tracked('');
  inFlight.enter(request);
  request.route = '/late';
  t.assert.deepStrictEqual(inFlight.routes().inFlight, ['/late']);
});

test('a request leaves from anywhere in the list; leaving twice, or without entering, changes nothing', (t: TestContext) => {
  const inFlight = new InFlight();
  const requests = ['/a', '/b', '/c', '/d'].map(tracked);
  for (const request of requests) inFlight.enter(request);
  inFlight.leave(requests[1] as ReturnType<typeof tracked>);
  inFlight.leave(requests[1] as ReturnType<typeof tracked>);
  inFlight.leave(tracked('/never'));
  t.assert.strictEqual(inFlight.count, 3);
  t.assert.deepStrictEqual(inFlight.routes().inFlight.sort(), ['/a', '/c', '/d']);
  for (const request of [requests[3], requests[0], requests[2]]) inFlight.leave(request as ReturnType<typeof tracked>);
  t.assert.strictEqual(inFlight.count, 0);
  t.assert.deepStrictEqual(inFlight.requests, []);
});
