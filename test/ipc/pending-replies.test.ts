import { type TestContext, test } from 'node:test';
import { PendingReplies, trySend, UNREACHABLE } from '../../src/ipc/pending-replies.ts';
import { MAX_MESSAGE_ID } from '../../src/ipc/protocol.ts';

const ERRORS = { timeout: 'no answer within 1000 ms', closed: 'the store is closed' };

test('a reply settles the request of its id, in whatever order they come; an unknown or repeated id is ignored', async (t: TestContext) => {
  const replies = new PendingReplies<string>(1_000, ERRORS);
  const a = replies.nextId();
  const b = replies.nextId();
  t.assert.notEqual(a, b);
  const first = replies.wait(a);
  const second = replies.wait(b);
  replies.sent(a, true);
  replies.sent(b, true);
  replies.settle(b, 'B');
  replies.settle(a + 100, 'nobody');
  replies.settle(a, new Error('the store failed'));
  replies.settle(a, 'late');
  t.assert.equal(await second, 'B');
  await t.assert.rejects(first, /the store failed/);
  t.assert.equal(replies.size, 0);
});

test('no reply within the timeout rejects every request of the message, once; a late reply is dropped', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const replies = new PendingReplies<number>(1_000, ERRORS);
  const batch = [{ id: replies.nextId() }, { id: replies.nextId() }, { id: replies.nextId() }];
  const [answered, ...forgotten] = batch.map(({ id }) => replies.wait(id));
  replies.sent(batch, true);
  replies.settle(batch[0]!.id, 1);
  t.assert.equal(await answered, 1);
  t.mock.timers.tick(999);
  t.assert.equal(replies.size, 2);
  t.mock.timers.tick(1);
  for (const request of forgotten) await t.assert.rejects(request!, /no answer within 1000 ms/);
  replies.settle(batch[1]!.id, 2);
  t.assert.equal(replies.size, 0);
});

test('a message answered in full clears its timer', (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const replies = new PendingReplies<number>(1_000, ERRORS);
  const id = replies.nextId();
  const reply = replies.wait(id);
  replies.sent(id, true);
  replies.settle(id, 7);
  t.mock.timers.tick(5_000);
  return reply.then((n) => t.assert.equal(n, 7));
});

test('a message that cannot be sent (the channel is closed, or closes under the send) rejects its requests at once', async (t: TestContext) => {
  const replies = new PendingReplies<number>(60_000, ERRORS);
  const one = replies.nextId();
  const single = replies.wait(one);
  replies.sent(
    one,
    trySend(() => false),
  );
  const batch = [{ id: replies.nextId() }, { id: replies.nextId() }];
  const requests = batch.map(({ id }) => replies.wait(id));
  replies.sent(
    batch,
    trySend(() => {
      throw new Error('channel closed');
    }),
  );
  await t.assert.rejects(single, new Error(UNREACHABLE));
  for (const request of requests) await t.assert.rejects(request, new Error(UNREACHABLE));
  t.assert.equal(replies.size, 0);
});

test('closing rejects the pending requests, and the store refuses requests after', async (t: TestContext) => {
  const replies = new PendingReplies<number>(60_000, ERRORS);
  const id = replies.nextId();
  const pending = replies.wait(id);
  replies.sent(id, true);
  replies.close();
  await t.assert.rejects(pending, /the store is closed/);
  t.assert.ok(replies.closed);
  t.assert.equal(replies.closedError().message, 'the store is closed');
  t.assert.equal(replies.size, 0);
});

test('each request gets an id of its own, a positive integer the guards accept', (t: TestContext) => {
  const replies = new PendingReplies<number>(1_000, ERRORS);
  const ids = new Set<number>();
  for (let i = 0; i < 1_000; i++) ids.add(replies.nextId());
  t.assert.equal(ids.size, 1_000);
  t.assert.ok([...ids].every((id) => id >= 1 && id <= MAX_MESSAGE_ID));
});
