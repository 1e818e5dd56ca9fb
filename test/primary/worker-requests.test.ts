import { type TestContext, test } from 'node:test';
import { msg } from '../../src/ipc/protocol.ts';
import { WorkerRequests } from '../../src/primary/worker-requests.ts';

const IDLE = { rss: 1, requests: 0, elu: 0, delayP50Ms: 0, delayP99Ms: 0, delayMaxMs: 0 };

test('a worker received requests once it says so, or once a heartbeat counts one', (t: TestContext) => {
  const requests = new WorkerRequests<object>();
  const told = {};
  const counted = {};
  const idle = {};
  requests.heard(told, msg.firstRequest(1));
  requests.heard(counted, msg.pong(1, { ...IDLE, requests: 3 }));
  requests.heard(idle, msg.pong(1, IDLE));
  requests.heard(idle, msg.listening(3, { host: 'h', port: 1 }));
  t.assert.deepStrictEqual(
    [told, counted, idle].map((w) => requests.received(w)),
    [true, true, false],
  );
});

test('the routes are those of the last heartbeat, replaced by the fatal message', (t: TestContext) => {
  const requests = new WorkerRequests<object>();
  const worker = {};
  t.assert.strictEqual(requests.routes(worker), undefined);
  requests.heard(worker, msg.pong(1, IDLE, { inFlight: ['/a'], last: '' }));
  t.assert.deepStrictEqual(requests.routes(worker), { inFlight: ['/a'], last: '' });
  requests.heard(worker, msg.fatal(1, 'boom', { inFlight: [], last: '/poison' }));
  t.assert.deepStrictEqual(requests.routes(worker), { inFlight: [], last: '/poison' });
  t.assert.strictEqual(requests.received(worker), true, 'a route named is a request received');
  const quiet = {};
  requests.heard(quiet, msg.fatal(2, 'boom'));
  t.assert.strictEqual(requests.received(quiet), false, 'a fatal message naming no route');
});
