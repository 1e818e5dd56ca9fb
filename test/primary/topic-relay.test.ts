import type { Worker } from 'node:cluster';
import { type TestContext, test } from 'node:test';
import { pino } from 'pino';
import { msg } from '../../src/ipc/protocol.ts';
import { TopicRelay } from '../../src/primary/topic-relay.ts';

function fakeWorker(connected = true) {
  const sent: unknown[] = [];
  const worker = { isConnected: () => connected, send: (m: unknown) => sent.push(m) } as unknown as Worker;
  return { worker, sent };
}

test('a publish goes to every connected worker, in order, and to the other replicas with this one as origin', async (t: TestContext) => {
  const a = fakeWorker();
  const b = fakeWorker();
  const gone = fakeWorker(false);
  const relay = new TopicRelay(() => [a.worker, b.worker, gone.worker], pino({ enabled: false }), 'me');
  const broadcast: string[] = [];
  relay.connect({ broadcast: async (m) => void broadcast.push(m) });
  relay.published(msg.publish('news', 'one', false));
  relay.published(msg.publish('news', 'AQI=', true));
  const expected = [msg.deliver('news', 'one', false), msg.deliver('news', 'AQI=', true)];
  t.assert.deepStrictEqual(a.sent, expected);
  t.assert.deepStrictEqual(b.sent, expected);
  t.assert.deepStrictEqual(gone.sent, []);
  t.assert.deepStrictEqual(JSON.parse(broadcast[0] as string), { o: 'me', t: 'news', d: 'one', b: false });
});

test("another replica's message is delivered; this replica's own and malformed ones are not", (t: TestContext) => {
  const a = fakeWorker();
  const relay = new TopicRelay(() => [a.worker], pino({ enabled: false }), 'me');
  relay.received(JSON.stringify({ o: 'other', t: 'news', d: 'hi', b: false }));
  relay.received(JSON.stringify({ o: 'me', t: 'news', d: 'echo', b: false }));
  relay.received('not json');
  relay.received(JSON.stringify({ o: 'other', t: 7, d: 'x', b: false }));
  relay.received('null');
  t.assert.deepStrictEqual(a.sent, [msg.deliver('news', 'hi', false)]);
});

test('a broadcast that fails is logged, the local delivery stands', async (t: TestContext) => {
  const a = fakeWorker();
  const relay = new TopicRelay(() => [a.worker], pino({ enabled: false }), 'me');
  relay.connect({ broadcast: () => Promise.reject(new Error('down')) });
  relay.published(msg.publish('news', 'one', false));
  await new Promise((resolve) => setImmediate(resolve));
  t.assert.strictEqual(a.sent.length, 1);
});
