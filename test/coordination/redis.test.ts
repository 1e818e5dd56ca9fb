import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Link } from '../../src/coordination/coordinator.ts';
import { redisCoordinator } from '../../src/coordination/redis.ts';
import { redisServer, SKIP_WITHOUT_REDIS } from '../helpers/redis-server.ts';
import { coordinatorContract } from './coordinator-contract.ts';

coordinatorContract({
  name: 'redis',
  skip: SKIP_WITHOUT_REDIS,
  server: (t) => redisServer(t),
  urlFor: (port) => `redis://127.0.0.1:${port}`,
  open: redisCoordinator,
});

test('the fencing token keeps growing after Redis lost its data (a restart without persistence)', {
  skip: SKIP_WITHOUT_REDIS,
}, async (t) => {
  const server = await redisServer(t);
  const logger = pino({ enabled: false });
  const coordinator = await redisCoordinator({
    url: server.url,
    service: 'restart',
    holder: 'a',
    timeoutMs: 500,
    leaseTtlMs: 3_000,
    leaseRenewMs: 1_000,
    logger,
    link: new Link(logger, () => {}),
  });
  t.after(() => coordinator.close());
  const before = await coordinator.acquireLease();
  assert.ok(before.held);
  await server.stop();
  await server.start();
  let after = await coordinator.acquireLease().catch(() => undefined);
  for (let i = 0; after === undefined && i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100)); // the client reconnects with backoff
    after = await coordinator.acquireLease().catch(() => undefined);
  }
  assert.ok(after?.held, 'taken again on the empty server');
  assert.ok(after.token > before.token, `${after.token} > ${before.token}`);
});
