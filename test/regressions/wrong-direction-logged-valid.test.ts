import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeInvalid, isPrimaryMessage, isWorkerMessage, msg } from '../../src/ipc/protocol.ts';

/**
 * What broke: a well-formed message sent the wrong way (a worker sending
 * `flotilla:shutdown`, the primary sending `flotilla:listening`) was dropped
 * and logged as "<type>: valid", which reads as if a valid message had been
 * lost. The description now says which way such a message goes.
 */

test('a message for the other side is described by its direction', () => {
  const fromPrimary = msg.shutdown(Date.now());
  assert.equal(isWorkerMessage(fromPrimary), false);
  assert.equal(describeInvalid(fromPrimary), 'flotilla:shutdown: valid, but it goes from the primary to a worker');
  const fromWorker = msg.listening(42, { host: '127.0.0.1', port: 3000 });
  assert.equal(isPrimaryMessage(fromWorker), false);
  assert.equal(describeInvalid(fromWorker), 'flotilla:listening: valid, but it goes from a worker to the primary');
});
