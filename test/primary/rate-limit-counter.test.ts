import type { Worker } from 'node:cluster';
import { type TestContext, test } from 'node:test';
import type { CounterStore } from '../../src/coordination/counter-store.ts';
import { MemoryCounterStore } from '../../src/coordination/memory-counter-store.ts';
import { isPrimaryMessage, msg, type RateLimitCountsMessage } from '../../src/ipc/protocol.ts';
import { ClusterCounts } from '../../src/primary/rate-limit-counter.ts';

/** A worker as the primary sees it, keeping what it is sent. */
function fakeWorker(connected = true) {
  const received: RateLimitCountsMessage[] = [];
  const worker = { isConnected: () => connected, send: (m: RateLimitCountsMessage) => received.push(m) } as unknown as Worker;
  return { worker, received };
}
const hits = (...ids: number[]) => msg.rateLimitHits(ids.map((id) => ({ id, key: 'k', windowMs: 60_000, undo: false })));
const flush = () => new Promise((resolve) => setImmediate(resolve));

test('the hits of every worker are counted in one store, each message answered to its worker in one message, by id', (t: TestContext) => {
  let opened = 0;
  const counts = new ClusterCounts(() => {
    opened++;
    return new MemoryCounterStore();
  });
  const a = fakeWorker();
  const b = fakeWorker();
  counts.hits(a.worker, hits(1, 2));
  counts.hits(b.worker, hits(1));
  counts.hits(a.worker, hits(3));
  counts.hits(b.worker, hits(2, 3));
  t.assert.equal(opened, 1, 'opened on the first hit, once');
  t.assert.ok([...a.received, ...b.received].every((m) => isPrimaryMessage(m)));
  t.assert.deepStrictEqual(
    a.received.map((m) => m.counts.map((c) => [c.id, c.count])),
    [
      [
        [1, 1],
        [2, 2],
      ],
      [[3, 4]],
    ],
  );
  t.assert.deepStrictEqual(
    b.received.map((m) => m.counts.map((c) => [c.id, c.count])),
    [
      [[1, 3]],
      [
        [2, 5],
        [3, 6],
      ],
    ],
  );
});

test('a store that fails answers ok: false; an asynchronous one answers once all its counts settle; a gone worker gets nothing', async (t: TestContext) => {
  const rejecting: CounterStore = { hit: () => Promise.reject(new Error('down')), release: () => {}, close: async () => {} };
  const throwing: CounterStore = {
    hit: () => {
      throw new Error('down');
    },
    release: () => {},
    close: async () => {},
  };
  for (const store of [rejecting, throwing]) {
    const counts = new ClusterCounts(() => store);
    const w = fakeWorker();
    counts.hits(w.worker, hits(4));
    await flush();
    t.assert.deepStrictEqual(w.received, [msg.rateLimitCounts([{ id: 4, ok: false, count: 0, resetMs: 0 }])]);
  }
  let n = 0;
  const later: CounterStore = { hit: async () => ({ count: ++n, resetMs: 10 }), release: () => {}, close: async () => {} };
  const counts = new ClusterCounts(() => later);
  const gone = fakeWorker(false);
  counts.hits(gone.worker, hits(1));
  const here = fakeWorker();
  counts.hits(here.worker, hits(2, 3));
  await flush();
  t.assert.deepStrictEqual(gone.received, []);
  t.assert.deepStrictEqual(here.received, [
    msg.rateLimitCounts([
      { id: 2, ok: true, count: 2, resetMs: 10 },
      { id: 3, ok: true, count: 3, resetMs: 10 },
    ]),
  ]);
});

test('close closes the store it opened, and a later hit opens a new one', async (t: TestContext) => {
  const closed: number[] = [];
  let n = 0;
  const counts = new ClusterCounts(() => {
    const id = ++n;
    return { hit: () => ({ count: id, resetMs: 1 }), release: () => {}, close: async () => void closed.push(id) };
  });
  await counts.close();
  t.assert.deepStrictEqual(closed, [], 'nothing opened, nothing closed');
  counts.hits(fakeWorker().worker, hits(1));
  await counts.close();
  t.assert.deepStrictEqual(closed, [1]);
});
