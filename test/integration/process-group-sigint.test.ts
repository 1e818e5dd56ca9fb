import { type TestContext, test } from 'node:test';
import { allGone, byMsg, startCluster } from '../helpers/cluster.ts';

test("a terminal's Ctrl-C (SIGINT to the whole process group) shuts the cluster down once, cleanly", async (t: TestContext) => {
  const cluster = startCluster(t);
  const { workers } = await cluster.ready();
  const workerPids = [...workers.values()];

  cluster.signalGroup('SIGINT');
  const exit = await cluster.exit(5_000);

  t.assert.deepStrictEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, cluster.stderr);
  await allGone(workerPids, 0);
  t.assert.deepStrictEqual(
    cluster.lines.filter(byMsg('cluster shutting down')).map((l) => l['reason']),
    ['SIGINT'],
    'the primary took the signal once',
  );
  t.assert.ok(!cluster.lines.some(byMsg('second signal: killing the workers and exiting now')));
  // the workers ignored their own copy of the signal: their shutdown came from the primary, once
  for (const pid of workerPids) {
    t.assert.deepStrictEqual(
      cluster.lines.filter((l) => l.msg === 'worker shutting down' && l.pid === pid).map((l) => l['reason']),
      ['primary'],
    );
  }
  const firstHooks = cluster.lines.filter(byMsg('fixture hook', { hook: 1 })).map((l) => l.pid);
  t.assert.deepStrictEqual(firstHooks.toSorted(), [cluster.pid, ...workerPids].toSorted(), 'hook 1 ran exactly once in every process');
  t.assert.strictEqual(cluster.lines.filter(byMsg('fixture hook', { hook: 2 })).length, 3);
});
