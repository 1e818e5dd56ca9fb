import { type TestContext, test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { isWorkerMessage, msg, type RateLimitHitsMessage } from '../../src/ipc/protocol.ts';
import { PrimaryCounterStore } from '../../src/worker/rate-limit-client.ts';

/** A store whose messages are kept, for the test to answer as the primary would. */
function wired(timeoutMs = 1_000, connected = true) {
  const sent: RateLimitHitsMessage[] = [];
  const store = new PrimaryCounterStore((m) => {
    if (connected) sent.push(m);
    return connected;
  }, timeoutMs);
  return { sent, store };
}
const ok = (id: number, count: number, resetMs: number) => ({ id, ok: true, count, resetMs });

test('the hits of one turn of the event loop go in one message, each with an id, resolved by the answer carrying it', async (t: TestContext) => {
  const { sent, store } = wired();
  const first = store.hit('k1', 60_000);
  const second = store.hit('k2', 1_000);
  t.assert.equal(sent.length, 0, 'sent at the end of the turn');
  await turn();
  t.assert.equal(sent.length, 1);
  const [message] = sent;
  t.assert.ok(message && isWorkerMessage(message));
  const [a, b] = message.hits;
  t.assert.ok(a && b && a.id !== b.id);
  t.assert.deepStrictEqual([a.key, a.windowMs, b.key, b.windowMs], ['k1', 60_000, 'k2', 1_000]);
  // answered in the other order
  store.answered(msg.rateLimitCounts([ok(b.id, 7, 300), ok(a.id, 1, 60_000)]));
  t.assert.deepStrictEqual(await first, { count: 1, resetMs: 60_000 });
  t.assert.deepStrictEqual(await second, { count: 7, resetMs: 300 });
  t.assert.equal(store.pending, 0);
  // the next turn's hits go in a message of their own
  void store.hit('k3', 1_000).catch(() => {});
  await turn();
  t.assert.equal(sent.length, 2);
  await store.close();
});

test('more than 1024 hits in one turn are sent in messages of at most 1024', async (t: TestContext) => {
  const { sent, store } = wired();
  const all = Array.from({ length: 2_500 }, (_, i) => store.hit(`k${i}`, 1_000));
  await turn();
  t.assert.deepStrictEqual(
    sent.map((m) => m.hits.length),
    [1024, 1024, 452],
  );
  t.assert.ok(sent.every((m) => isWorkerMessage(m)));
  for (const m of sent) store.answered(msg.rateLimitCounts(m.hits.map((h) => ok(h.id, 1, 1))));
  t.assert.equal((await Promise.all(all)).length, 2_500);
});

test("the primary's failure to count rejects the hit; an unknown or repeated answer is ignored", async (t: TestContext) => {
  const { sent, store } = wired();
  const hit = store.hit('k', 1_000);
  await turn();
  const id = sent[0]?.hits[0]?.id ?? 0;
  store.answered(msg.rateLimitCounts([ok(id + 100, 1, 1)]));
  store.answered(msg.rateLimitCounts([{ id, ok: false, count: 0, resetMs: 0 }]));
  await t.assert.rejects(hit, /the primary could not count the request/);
  store.answered(msg.rateLimitCounts([ok(id, 1, 1)]));
  t.assert.equal(store.pending, 0);
});

test('no answer within the timeout rejects the hits of the message, and a late answer is dropped', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
  const { sent, store } = wired(1_500);
  const answered = store.hit('a', 1_000);
  const forgotten = store.hit('b', 1_000);
  t.mock.timers.tick(0);
  const [a, b] = sent[0]?.hits ?? [];
  t.assert.ok(a && b);
  store.answered(msg.rateLimitCounts([ok(a.id, 1, 1)]));
  t.assert.deepStrictEqual(await answered, { count: 1, resetMs: 1 });
  t.mock.timers.tick(1_499);
  t.assert.equal(store.pending, 1);
  t.mock.timers.tick(1);
  await t.assert.rejects(forgotten, /the primary did not count the request within 1500 ms/);
  store.answered(msg.rateLimitCounts([ok(b.id, 1, 1)]));
  t.assert.equal(store.pending, 0);
});

test('a closed channel rejects the message at once; closing the store rejects what waits and every later hit', async (t: TestContext) => {
  const down = wired(1_000, false);
  const lost = t.assert.rejects(down.store.hit('k', 1_000), /the primary cannot be reached/);
  await turn();
  await lost;
  t.assert.equal(down.store.pending, 0);
  const { sent, store } = wired();
  const waiting = store.hit('k', 1_000);
  await store.close();
  await t.assert.rejects(waiting, /closed/);
  await t.assert.rejects(store.hit('k', 1_000), /closed/);
  await turn();
  t.assert.equal(sent.length, 0, 'nothing sent after the close');
});
