import { type TestContext, test } from 'node:test';
import { allGone, byMsg, startCluster } from '../helpers/cluster.ts';

test('a second SIGTERM during a stuck shutdown kills the workers and exits at once', async (t: TestContext) => {
  // a hook that never finishes, and the default 10 s budget
  const cluster = startCluster(t, { env: { FIXTURE_HANG_HOOK: '1' } });
  const { workers } = await cluster.ready();
  const workerPids = [...workers.values()];

  const firstAt = Date.now();
  cluster.signal('SIGTERM');
  // stuck: every process ran hook 1 and now waits in hook 2
  await cluster.waitForCount(byMsg('fixture hook', { hook: 1 }), 3, 'hook 1 in the primary and both workers');
  const secondAt = Date.now();
  cluster.signal('SIGTERM');
  const exit = await cluster.exit(2_000);

  t.assert.deepStrictEqual({ code: exit.code, signal: exit.signal }, { code: 128 + 15, signal: null });
  t.diagnostic(`exited ${exit.at - secondAt} ms after the second signal, ${exit.at - firstAt} ms after the first`);
  t.assert.ok(exit.at - secondAt < 1_000, `exited ${exit.at - secondAt} ms after the second signal`);
  t.assert.ok(exit.at - firstAt < 5_000, 'well before the 10 s budget');
  t.assert.ok(cluster.lines.some(byMsg('second signal: killing the workers and exiting now', { signal: 'SIGTERM' })));
  t.assert.ok(!cluster.lines.some(byMsg('fixture hook', { hook: 2 })), 'hook 2 never completed anywhere');
  await allGone(workerPids, 1_000);
});
