import { type TestContext, test } from 'node:test';
import { isWorkerMessage, msg, type RateLimitHitMessage } from '../../src/ipc/protocol.ts';
import { PrimaryCounterStore } from '../../src/worker/rate-limit-client.ts';

/** A store whose messages are kept, for the test to answer as the primary would. */
function wired(timeoutMs = 1_000, connected = true) {
  const sent: RateLimitHitMessage[] = [];
  const store = new PrimaryCounterStore((m) => {
    if (connected) sent.push(m);
    return connected;
  }, timeoutMs);
  return { sent, store };
}

test('each hit is asked of the primary with an id of its own, and resolves with the answer carrying that id', async (t: TestContext) => {
  const { sent, store } = wired();
  const first = store.hit('k1', 60_000);
  const second = store.hit('k2', 1_000);
  t.assert.equal(sent.length, 2);
  t.assert.ok(sent.every((m) => isWorkerMessage(m)));
  const [a, b] = sent;
  t.assert.ok(a && b && a.id !== b.id);
  t.assert.deepStrictEqual([a.key, a.windowMs, b.key, b.windowMs], ['k1', 60_000, 'k2', 1_000]);
  // answers in the other order
  store.answered(msg.rateLimitCount(b.id, { count: 7, resetMs: 300 }));
  store.answered(msg.rateLimitCount(a.id, { count: 1, resetMs: 60_000 }));
  t.assert.deepStrictEqual(await first, { count: 1, resetMs: 60_000 });
  t.assert.deepStrictEqual(await second, { count: 7, resetMs: 300 });
  t.assert.equal(store.pending, 0);
});

test("the primary's failure to count rejects the hit; an unknown or repeated answer is ignored", async (t: TestContext) => {
  const { sent, store } = wired();
  const hit = store.hit('k', 1_000);
  const id = sent[0]?.id ?? 0;
  store.answered(msg.rateLimitCount(id + 100, { count: 1, resetMs: 1 }));
  store.answered(msg.rateLimitCount(id, undefined));
  await t.assert.rejects(hit, /the primary could not count the request/);
  store.answered(msg.rateLimitCount(id, { count: 1, resetMs: 1 }));
  t.assert.equal(store.pending, 0);
});

test('no answer within the timeout rejects the hit, and a late answer is dropped', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { sent, store } = wired(1_500);
  const hit = store.hit('k', 1_000);
  t.mock.timers.tick(1_499);
  t.assert.equal(store.pending, 1);
  t.mock.timers.tick(1);
  await t.assert.rejects(hit, /the primary did not count the request within 1500 ms/);
  store.answered(msg.rateLimitCount(sent[0]?.id ?? 0, { count: 1, resetMs: 1 }));
  t.assert.equal(store.pending, 0);
});

test('a closed channel rejects at once; closing the store rejects what waits and every later hit', async (t: TestContext) => {
  const down = wired(1_000, false);
  await t.assert.rejects(down.store.hit('k', 1_000), /the primary cannot be reached/);
  t.assert.equal(down.store.pending, 0);
  const { store } = wired();
  const waiting = store.hit('k', 1_000);
  await store.close();
  await t.assert.rejects(waiting, /closed/);
  await t.assert.rejects(store.hit('k', 1_000), /closed/);
});
