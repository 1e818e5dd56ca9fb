import { type TestContext, test } from 'node:test';
import { allGone, byMsg, startCluster } from '../helpers/cluster.ts';

test('workers that keep dying soon after they start make the primary give up with exit code 1', async (t: TestContext) => {
  const startedAt = Date.now();
  const cluster = startCluster(t, { env: { FIXTURE_CRASH_SOON: '1' } });
  const exit = await cluster.exit(10_000); // four worker boots, two at a time, with backoff in between

  t.assert.deepStrictEqual({ code: exit.code, signal: exit.signal }, { code: 1, signal: null });
  t.diagnostic(`gave up after ${exit.at - startedAt} ms`);
  const giveUp = cluster.lines.find(byMsg('workers keep failing early: giving up (crash loop)'));
  t.assert.ok(giveUp !== undefined, 'the crash loop is logged');
  t.assert.strictEqual(giveUp.level, 'fatal');
  t.assert.strictEqual(giveUp.pid, cluster.pid);

  // crashLoopFailures is 4: three replacements with backoff, then the fourth failure ends it
  const replaced = cluster.lines.filter(byMsg('worker exited unexpectedly: replacing it'));
  t.assert.strictEqual(replaced.length, 3);
  t.assert.ok(cluster.lines.some(byMsg('primary shutdown: done')), 'the primary shut down in order');

  // every worker ever forked is gone
  const forked = new Set(cluster.lines.filter((l) => l['role'] === 'worker' || l['worker'] !== undefined).map((l) => l.pid as number));
  for (const line of cluster.lines) if (typeof line['workerPid'] === 'number') forked.add(line['workerPid']);
  t.assert.ok(forked.size >= 4, `saw ${forked.size} worker pids`);
  await allGone([...forked], 0);
});
