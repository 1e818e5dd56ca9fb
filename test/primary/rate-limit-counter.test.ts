import type { Worker } from 'node:cluster';
import { type TestContext, test } from 'node:test';
import type { CounterStore } from '../../src/coordination/counter-store.ts';
import { MemoryCounterStore } from '../../src/coordination/memory-counter-store.ts';
import { isPrimaryMessage, msg, type RateLimitCountMessage } from '../../src/ipc/protocol.ts';
import { ClusterCounts } from '../../src/primary/rate-limit-counter.ts';

/** A worker as the primary sees it, keeping what it is sent. */
function fakeWorker(connected = true) {
  const received: RateLimitCountMessage[] = [];
  const worker = { isConnected: () => connected, send: (m: RateLimitCountMessage) => received.push(m) } as unknown as Worker;
  return { worker, received };
}

test('the hits of every worker are counted in one store, each answered to its own worker with its id', (t: TestContext) => {
  let opened = 0;
  const counts = new ClusterCounts(() => {
    opened++;
    return new MemoryCounterStore();
  });
  const a = fakeWorker();
  const b = fakeWorker();
  for (let i = 1; i <= 3; i++) {
    counts.hit(a.worker, msg.rateLimitHit(i, 'k', 60_000));
    counts.hit(b.worker, msg.rateLimitHit(i, 'k', 60_000));
  }
  t.assert.equal(opened, 1, 'opened on the first hit, once');
  t.assert.ok([...a.received, ...b.received].every((m) => isPrimaryMessage(m) && m.ok));
  t.assert.deepStrictEqual(
    a.received.map((m) => [m.id, m.count]),
    [
      [1, 1],
      [2, 3],
      [3, 5],
    ],
  );
  t.assert.deepStrictEqual(
    b.received.map((m) => [m.id, m.count]),
    [
      [1, 2],
      [2, 4],
      [3, 6],
    ],
  );
});

test('a store that fails answers ok: false; an asynchronous one answers when it settles; a gone worker gets nothing', async (t: TestContext) => {
  const rejecting: CounterStore = { hit: () => Promise.reject(new Error('down')), close: async () => {} };
  const throwing: CounterStore = {
    hit: () => {
      throw new Error('down');
    },
    close: async () => {},
  };
  for (const store of [rejecting, throwing]) {
    const counts = new ClusterCounts(() => store);
    const w = fakeWorker();
    counts.hit(w.worker, msg.rateLimitHit(4, 'k', 1_000));
    await new Promise((resolve) => setImmediate(resolve));
    t.assert.deepStrictEqual(w.received, [msg.rateLimitCount(4, undefined)]);
  }
  const later: CounterStore = { hit: async () => ({ count: 2, resetMs: 10 }), close: async () => {} };
  const counts = new ClusterCounts(() => later);
  const gone = fakeWorker(false);
  counts.hit(gone.worker, msg.rateLimitHit(1, 'k', 1_000));
  const here = fakeWorker();
  counts.hit(here.worker, msg.rateLimitHit(2, 'k', 1_000));
  await new Promise((resolve) => setImmediate(resolve));
  t.assert.deepStrictEqual(gone.received, []);
  t.assert.deepStrictEqual(here.received, [msg.rateLimitCount(2, { count: 2, resetMs: 10 })]);
});

test('close closes the store it opened, and a later hit opens a new one', async (t: TestContext) => {
  const closed: number[] = [];
  let n = 0;
  const counts = new ClusterCounts(() => {
    const id = ++n;
    return { hit: () => ({ count: id, resetMs: 1 }), close: async () => void closed.push(id) };
  });
  await counts.close();
  t.assert.deepStrictEqual(closed, [], 'nothing opened, nothing closed');
  counts.hit(fakeWorker().worker, msg.rateLimitHit(1, 'k', 1));
  await counts.close();
  t.assert.deepStrictEqual(closed, [1]);
});
