import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { byMsg, startCluster } from '../helpers/cluster.ts';

test('a one-second cron job fires once per second across the whole cluster, in the primary only', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { workers } = await cluster.ready();

  // The window is the measurement itself: count the ticks logged while it is open. It opens at the first tick:
  // the service thread starts once a worker listens, and on a loaded machine its scheduler a second or two later.
  await cluster.waitFor(byMsg('fixture tick'), 'the first tick', 15_000);
  const from = Date.now();
  await sleep(3_500);
  const to = Date.now();
  // the service thread's lines reach stdout in batches: once a later tick is in, every tick of the window is
  await cluster.waitFor((l) => l.msg === 'fixture tick' && Date.parse(String(l['time'])) > to, 'a tick after the window', 15_000);
  const inWindow = cluster.lines.filter((l) => {
    const at = Date.parse(String(l['time']));
    return l.msg === 'fixture tick' && at >= from && at <= to;
  });
  const seconds = (to - from) / 1000;
  t.assert.ok(
    Math.abs(inWindow.length - seconds) <= 1,
    `${inWindow.length} ticks in ${seconds.toFixed(2)} s: expected one per second in total, not one per process`,
  );

  const allTicks = cluster.lines.filter(byMsg('fixture tick'));
  for (const tick of allTicks) {
    t.assert.strictEqual(tick.pid, cluster.pid, 'every tick is logged by the primary');
    t.assert.strictEqual(tick['tag'], `primary:${cluster.pid}`);
  }
  const workerPids = new Set(workers.values());
  t.assert.ok(!cluster.lines.some((l) => l.msg === 'fixture tick' && workerPids.has(l.pid as number)), 'no worker ever ticks');
  t.assert.ok(
    !cluster.lines.some((l) => l.msg === 'scheduled job succeeded' && l.pid !== cluster.pid),
    'no scheduler runs outside the primary',
  );
});
