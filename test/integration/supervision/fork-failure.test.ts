import { chmodSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { byMsg, get, sample, startCluster, tempFiles } from '../../helpers/cluster.ts';

test('a replacement that cannot be forked is counted and retried; the primary and the other worker live on', async (t: TestContext) => {
  // A node binary of our own, so that taking its execute permission away makes the next fork fail with EACCES
  // (as it does for root too: execve needs an execute bit), the way a full pids cgroup makes it fail with EAGAIN.
  const node = join(tempFiles(t, {}), 'node');
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  const cluster = startCluster(t, { execPath: node, config: { cluster: { stableAfterMs: 500, backoffMaxMs: 200 } } });
  const { appPort, metricsPort, workers } = await cluster.ready();
  const [[slot, victim], [, survivor]] = [...workers.entries()] as [[number, number], [number, number]];
  await new Promise((r) => setTimeout(r, 600)); // both stable

  chmodSync(node, 0o644);
  process.kill(victim, 'SIGKILL');
  // crashLoopFailures is 4 in the tests' base config: more failed forks than that, and the primary still retries
  const failures = await cluster.waitForCount(byMsg('could not fork a worker: retrying'), 6, 'fork failures', 15_000);
  t.assert.strictEqual(failures[0]?.['code'], 'EACCES');
  t.assert.strictEqual(failures[0]?.['slot'], slot);
  t.assert.strictEqual((await get(appPort, '/pid')).body, JSON.stringify({ pid: survivor }), 'the other worker serves meanwhile');

  chmodSync(node, 0o755);
  const up = await cluster.waitFor(
    (l) => l.msg === 'worker listening' && l['slot'] === slot && l['workerPid'] !== victim,
    'the retried fork',
    15_000,
  );
  t.assert.ok(typeof up['workerPid'] === 'number');
  const metrics = (await get(metricsPort, '/metrics')).body;
  t.assert.ok((sample(metrics, 'flotilla_worker_restarts_total{reason="fork-failed"}') ?? 0) >= 6);
  t.assert.strictEqual(sample(metrics, 'flotilla_workers_up'), 2);
  t.assert.strictEqual(cluster.child.exitCode, null, 'the primary is alive');
});
