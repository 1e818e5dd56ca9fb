import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App } from '../../src/app/app.ts';
import { CronScheduler } from '../../src/scheduler/cron-scheduler.ts';
import type { Scheduler } from '../../src/scheduler/scheduler.ts';
import { testApp } from '../helpers/app.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';

/** A standalone App of the service `coordinated`, with a one-second cron job and a lease-based scheduler, recording what runs. */
function replica(url: string, name: string, fires: string[], lease: string[]): App {
  const { app } = testApp({
    serviceName: 'coordinated',
    coordination: { url, leaseTtlMs: 2_000, leaseRenewMs: 200, timeoutMs: 800 },
  });
  app.registerScheduler(new CronScheduler([{ name: 'tick', cron: '* * * * * *', run: (_signal, fire) => void fires.push(fire.key) }]));
  let token = 0;
  const leased: Scheduler = {
    bind: (env) => {
      token = env.fencingToken ?? -1;
    },
    start: () => void lease.push(`${name} start ${token}`),
    stop: () => void lease.push(`${name} stop ${token}`),
  };
  app.registerScheduler(leased);
  return app;
}

test('standalone Apps on one coordinator share their schedulers: one run per fire, one lease holder, handed over on close', {
  skip: SKIP_WITHOUT_REDIS,
  timeout: 30_000,
}, async (t: TestContext) => {
  const redis = await redisServer(t);
  const fires: string[] = [];
  const lease: string[] = [];
  const [a, b] = [replica(redis.url, 'a', fires, lease), replica(redis.url, 'b', fires, lease)];
  const listening = [a.listen(), b.listen()];
  t.after(async () => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all(listening);
  });
  await Promise.all([a.ready(), b.ready()]);
  await sleep(3_200);
  assert.ok(fires.length >= 2, `${fires.length} fires`);
  assert.equal(new Set(fires).size, fires.length, `each fire once: ${fires.join(', ')}`);
  assert.equal(lease.length, 1, `one holder: ${lease.join(', ')}`);

  const [holder, token] = (lease[0] ?? '').split(' start ');
  await (holder === 'a' ? a : b).close();
  const other = holder === 'a' ? 'b' : 'a';
  for (let i = 0; i < 50 && !lease.some((l) => l.startsWith(`${other} start`)); i++) await sleep(50);
  assert.deepEqual(lease.slice(1, 2), [`${holder} stop ${token}`], 'stopped by the close');
  const next = lease.find((l) => l.startsWith(`${other} start`));
  assert.ok(next !== undefined, `the other took over at once: ${lease.join(', ')}`);
  assert.ok(Number(next.split(' ')[2]) > Number(token), 'with a greater fencing token');
});
