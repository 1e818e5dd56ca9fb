import { once } from 'node:events';
import { type TestContext, test } from 'node:test';
import { Worker } from 'node:worker_threads';

const CHILD = `
import { readlinkSync } from 'node:fs';
import { getPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
const { lowerThreadPriority } = await import(process.env.MODULE_URL);
const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
const lowered = lowerThreadPriority(10);
parentPort.postMessage({ lowered, thread: getPriority(tid), process: getPriority(process.pid) });
`;

test('lowerThreadPriority lowers the calling thread alone (Linux)', {
  skip: process.platform !== 'linux',
  timeout: 30_000,
}, async (t: TestContext) => {
  const { getPriority } = await import('node:os');
  const before = getPriority(process.pid);
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(CHILD)}`), {
    env: { ...process.env, MODULE_URL: new URL('../../src/utils/thread-priority.ts', import.meta.url).href },
  });
  // both listened for at once: the exit may come in the same turn as the message
  const exited = once(worker, 'exit');
  const [reply] = (await once(worker, 'message')) as [{ lowered: boolean; thread: number; process: number }];
  await exited;
  t.assert.strictEqual(reply.lowered, true);
  t.assert.ok(reply.thread >= 10, `the thread's nice value: ${reply.thread}`);
  t.assert.strictEqual(reply.process, before, "the process's main thread keeps its priority");
});
