import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { describe, type TestContext, test } from 'node:test';
import { msg } from '../../src/ipc/protocol.ts';
import { ListeningWaits } from '../../src/primary/worker-process.ts';

/** A forked worker as far as the wait sees it: its events and its pid (none when the spawn failed). */
function fakeWorker(started = true): Worker & EventEmitter {
  return Object.assign(new EventEmitter(), { process: { pid: started ? 1234 : undefined } }) as unknown as Worker & EventEmitter;
}

/** Whether the promise has settled, and with what, once the pending callbacks ran. */
async function settled<T>(promise: Promise<T>): Promise<{ value: T } | 'pending'> {
  const pending = Symbol('pending');
  const value = await Promise.race([promise, new Promise<typeof pending>((resolve) => setImmediate(() => resolve(pending)))]);
  return value === pending ? 'pending' : { value: value as T };
}

describe('waiting for a worker to listen', () => {
  test("resolves true when the primary's dispatcher hears its flotilla:listening, and lets go of the worker", async (t: TestContext) => {
    const waits = new ListeningWaits();
    const worker = fakeWorker();
    const other = fakeWorker();
    const until = waits.untilListening(worker, 60_000);
    // the message itself is the dispatcher's: the wait adds no listener of its own
    worker.emit('message', msg.listening(1234, { host: '127.0.0.1', port: 1 }));
    waits.listening(other);
    t.assert.equal(await settled(until), 'pending');
    t.assert.equal(worker.listenerCount('message'), 0);
    waits.listening(worker);
    t.assert.deepStrictEqual(await settled(until), { value: true });
    t.assert.deepStrictEqual([worker.listenerCount('exit'), worker.listenerCount('error')], [0, 0]);
  });

  test('every wait for the same worker ends with its flotilla:listening', async (t: TestContext) => {
    const waits = new ListeningWaits();
    const worker = fakeWorker();
    const both = Promise.all([waits.untilListening(worker, 60_000), waits.untilListening(worker, 60_000)]);
    waits.listening(worker);
    t.assert.deepStrictEqual(await both, [true, true]);
  });

  test('resolves false when the worker exits, or was never started; not on an error of a running one', async (t: TestContext) => {
    const waits = new ListeningWaits();
    const exiting = fakeWorker();
    const exited = waits.untilListening(exiting, 60_000);
    exiting.emit('error', new Error('channel closed'));
    t.assert.equal(await settled(exited), 'pending');
    exiting.emit('exit', 1, null);
    t.assert.deepStrictEqual(await settled(exited), { value: false });
    const unborn = fakeWorker(false);
    const never = waits.untilListening(unborn, 60_000);
    unborn.emit('error', new Error('spawn EACCES'));
    t.assert.deepStrictEqual(await settled(never), { value: false });
    waits.listening(exiting);
    t.assert.deepStrictEqual([exiting.listenerCount('exit'), exiting.listenerCount('error')], [0, 0]);
  });

  test('resolves false once the start-up timeout passes first', async (t: TestContext) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const waits = new ListeningWaits();
    const worker = fakeWorker();
    const until = waits.untilListening(worker, 10_000);
    t.mock.timers.tick(10_000);
    t.assert.equal(await until, false);
    waits.listening(worker);
    t.assert.equal(worker.listenerCount('exit'), 0);
  });
});
