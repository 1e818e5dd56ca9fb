import { type TestContext, test } from 'node:test';
import { msg, type WorkerMessage } from '../../src/ipc/protocol.ts';
import { IpcTopics } from '../../src/worker/ipc-topics.ts';

test('a publish goes to the primary as flotilla:publish; a delivery comes back decoded', (t: TestContext) => {
  const sent: WorkerMessage[] = [];
  const topics = new IpcTopics((m) => sent.push(m));
  const delivered: [string, string | Buffer][] = [];
  topics.open((topic, payload) => delivered.push([topic, payload]));
  topics.publish('news', 'text');
  topics.publish('news', Buffer.from([1, 2]));
  t.assert.deepStrictEqual(sent, [msg.publish('news', 'text', false), msg.publish('news', 'AQI=', true)]);
  // nothing is delivered until the primary hands it back: one path for every worker, this one included
  t.assert.deepStrictEqual(delivered, []);
  topics.delivered(msg.deliver('news', 'text', false));
  topics.delivered(msg.deliver('news', 'AQI=', true));
  t.assert.deepStrictEqual(delivered, [
    ['news', 'text'],
    ['news', Buffer.from([1, 2])],
  ]);
});
