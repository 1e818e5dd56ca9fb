import { type TestContext, test } from 'node:test';
import { allGone, byMsg, startCluster } from '../helpers/cluster.ts';

const BUDGET_MS = 1_500;

test('a hook that never finishes cannot keep the tree alive past the shutdown budget', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { shutdown: { timeoutMs: BUDGET_MS } }, env: { FIXTURE_HANG_HOOK: '1' } });
  const { workers } = await cluster.ready();
  const pids = [...workers.values()];

  const signalledAt = Date.now();
  cluster.signal('SIGTERM');
  const exit = await cluster.exit(BUDGET_MS + 1_000);

  // A hook cut short makes the shutdown unclean: exit code 1, so the orchestrator can tell.
  t.assert.deepStrictEqual({ code: exit.code, signal: exit.signal }, { code: 1, signal: null }, cluster.stderr);
  t.assert.ok(exit.at - signalledAt >= BUDGET_MS - 100, `exited after ${exit.at - signalledAt} ms: the hooks had their budget`);
  t.diagnostic(`exited ${exit.at - signalledAt} ms after the signal`);
  await allGone(pids, 0); // the primary waited for them: none is left at its exit

  // Every process ran hook 1, and hook 2 never logged: it was abandoned at the deadline.
  for (const pid of [cluster.pid, ...pids]) {
    t.assert.deepStrictEqual(
      cluster.lines.filter((l) => l.msg === 'fixture hook' && l.pid === pid).map((l) => l['hook']),
      [1],
    );
    t.assert.ok(
      cluster.lines.some((l) => l.msg === 'shutdown: done' && l.pid === pid && l['ok'] === false),
      `process ${pid} reports an unclean shutdown`,
    );
  }
  t.assert.ok(cluster.lines.some(byMsg('primary shutdown: done', { ok: false })));
});
