import type { TestContext } from 'node:test';
import { RedisServer } from '../../tools/redis-server.ts';
import { requireTool } from './require-tool.ts';

export type { RedisServer } from '../../tools/redis-server.ts';

/** A test's `skip` option: skipped without Debian's `redis-server`, except in CI, where it must run (see `requireTool`). */
export const SKIP_WITHOUT_REDIS = requireTool('redis-server');

/**
 * A throwaway `redis-server` for the length of the test (`tools/redis-server.ts`): a free port of
 * 127.0.0.1, a temporary directory, nothing persisted; stopped and removed after the test.
 *
 * @example
 * const redis = await redisServer(t);
 * await redis.stop(); await redis.start(); // down and back, on the same port
 */
export async function redisServer(t: TestContext): Promise<RedisServer> {
  const server = await RedisServer.create();
  t.after(() => server.dispose());
  return server;
}
