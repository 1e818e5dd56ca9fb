import { type TestContext, test } from 'node:test';
import { exitReason } from '../../src/primary/exit-reason.ts';

test('an unexpected exit is named by what the supervisor saw first, then by its signal, then by its code', (t: TestContext) => {
  const exit = { failure: undefined, code: 1, signal: null, wasUp: true };
  t.assert.deepStrictEqual(exitReason({ ...exit, failure: 'startup-timeout', signal: 'SIGKILL' }), { reason: 'startup-timeout' });
  t.assert.deepStrictEqual(exitReason(exit), { reason: 'crash' });
  t.assert.deepStrictEqual(exitReason({ ...exit, code: 0 }), { reason: 'unexpected-exit' });
  t.assert.deepStrictEqual(exitReason({ ...exit, wasUp: false }), { reason: 'boot-failure' });
  t.assert.deepStrictEqual(exitReason({ ...exit, code: null, signal: 'SIGTERM' }), { reason: 'killed-SIGTERM' });
});

test('a SIGKILL or SIGABRT nobody sent is explained in words', (t: TestContext) => {
  const killed = exitReason({ failure: undefined, code: null, signal: 'SIGKILL', wasUp: true });
  t.assert.strictEqual(killed.reason, 'killed-SIGKILL');
  t.assert.match(killed.likelyCause ?? '', /out-of-memory killer/);
  const aborted = exitReason({ failure: undefined, code: null, signal: 'SIGABRT', wasUp: true });
  t.assert.strictEqual(aborted.reason, 'killed-SIGABRT');
  t.assert.match(aborted.likelyCause ?? '', /heap out of memory/);
});
