import { createHash } from 'node:crypto';
import type { RedisClientType } from '@redis/client';
import { backoffMs, ClockSkewError, type Coordinator, type CoordinatorOptions, fireTimeOf, type LeaseAttempt } from './coordinator.ts';
import { importClient } from './import-client.ts';

/** A Lua script, run by its SHA-1 (EVALSHA) and sent whole only when the server does not have it yet. */
interface Script {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** The server's clock in ms, as the scripts below read it (effects replication, for a write after TIME: the default since Redis 5). */
const NOW_MS = `if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * A fire's claim: `SET key holder NX PX ttl`, only while the server's clock is within ttl / 2 of the
 * fire time. KEYS: the claim. ARGV: holder, fire time (ms), ttl (ms). → {1 won | 2 taken | 0 clock skew, skew ms}.
 */
const CLAIM = script(`${NOW_MS}
local skew = now - tonumber(ARGV[2])
if math.abs(skew) > tonumber(ARGV[3]) / 2 then return {0, skew} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[3]) then return {1, skew} end
return {2, skew}`);

/**
 * Takes the lease when it is free (or still this holder's): a new fencing token, the larger of
 * the last one + 1 and the server's time in ms, so that it keeps growing even if Redis lost the
 * last one (a restart without persistence). KEYS: lease, token. ARGV: holder, ttl (ms).
 * → {1, token} | {0, ms before the lease expires}.
 */
const ACQUIRE = script(`local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[1])} end
${NOW_MS}
local token = math.max((tonumber(redis.call('GET', KEYS[2])) or 0) + 1, now)
redis.call('SET', KEYS[2], string.format('%.0f', token))
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, token}`);

/** Extends the lease if this holder still has it. KEYS: lease. ARGV: holder, ttl (ms). → 1 | 0. */
const RENEW = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`);

/** Deletes the lease if this holder has it. KEYS: lease. ARGV: holder. */
const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

/**
 * A rate limit's hit in its fixed window: INCR, and PEXPIRE when the key has no expiry yet (it is new,
 * or lost it), in one script so that no other client runs in between. KEYS: the counter. ARGV: the
 * window (ms). → {count, ms left}.
 */
const HIT = script(`local count = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}`);

/** Takes a request back from a running window. KEYS: the counter. */
const RELEASE_HIT = script(`if redis.call('PTTL', KEYS[1]) > 0 and tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0`);

/** A session with the ms it has left. KEYS: the session. → {json, ms left} | nil. */
const SESSION_GET = script(`local data = redis.call('GET', KEYS[1])
if not data then return nil end
return {data, redis.call('PTTL', KEYS[1])}`);

/** Keeps a session for its ttl. KEYS: the session. ARGV: its JSON, ttl (ms). */
const SESSION_SET = script(`return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])`);

/** Removes a session. KEYS: the session. */
const SESSION_DELETE = script(`return redis.call('DEL', KEYS[1])`);

/**
 * The Redis backend, on node-redis (`@redis/client`): one connection, reconnected by the client
 * with backoff (100 ms doubling to 1 s); commands fail at once while it is down (no offline
 * queue: a fire is skipped rather than claimed late) and after `timeoutMs` when Redis does not
 * answer. Keys: `flotilla:{<service>}:fire:<job>:<time>` (one per fire, expiring after the claim's
 * ttl), `flotilla:{<service>}:lease` (the holder, with the lease's ttl) and
 * `flotilla:{<service>}:lease-token`; a rate limit's counters are
 * `flotilla:rate:<service>:<key>` (no hash tag: spread over a Redis Cluster's slots), expiring with
 * their window; a session is `flotilla:session:<service>:<id>`, expiring with it.
 *
 * @example
 * const coordinator = await redisCoordinator({ url: 'redis://redis:6379', service: 'books', … });
 */
export async function redisCoordinator(o: CoordinatorOptions): Promise<Coordinator> {
  const { createClient } = await importClient<typeof import('@redis/client')>('@redis/client', o.url);
  const client: RedisClientType = createClient({
    url: o.url,
    disableOfflineQueue: true,
    commandOptions: { timeout: o.timeoutMs },
    socket: { connectTimeout: o.timeoutMs, reconnectStrategy: (retries: number) => backoffMs(retries, 1_000) },
  }) as RedisClientType;
  client.on('error', (error: unknown) => o.link.down(error));
  client.on('ready', () => o.link.up());
  // connects in the background, retrying until it succeeds; the schedulers start after the first attempt
  // (`timeoutMs` at most), and fires are skipped until it succeeds
  const connecting = client.connect().catch((error: unknown) => o.link.down(error));
  await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, o.timeoutMs).unref())]);

  const prefix = `flotilla:{${o.service}}`;
  const lease = `${prefix}:lease`;
  const channel = `${prefix}:topics`;
  let subscriber: RedisClientType | undefined;
  const run = async (s: Script, keys: string[], args: string[]): Promise<unknown> => {
    try {
      const reply = await client.evalSha(s.sha, { keys, arguments: args }).catch((error: unknown) => {
        if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return client.eval(s.source, { keys, arguments: args });
        throw error;
      });
      o.link.up();
      return reply;
    } catch (error) {
      o.link.down(error);
      throw error;
    }
  };

  return {
    backend: 'redis',
    async claim(key, ttlMs) {
      const { at } = fireTimeOf(key);
      const [result, skew] = (await run(CLAIM, [`${prefix}:fire:${key}`], [o.holder, String(at), String(ttlMs)])) as [number, number];
      if (result === 0) throw new ClockSkewError(key, skew, ttlMs / 2);
      return result === 1;
    },
    async acquireLease(): Promise<LeaseAttempt> {
      const [held, value] = (await run(ACQUIRE, [lease, `${prefix}:lease-token`], [o.holder, String(o.leaseTtlMs)])) as [number, number];
      return held === 1 ? { held: true, token: value } : { held: false, retryInMs: value > 0 ? value : o.leaseRenewMs };
    },
    async renewLease() {
      return (await run(RENEW, [lease], [o.holder, String(o.leaseTtlMs)])) === 1;
    },
    async releaseLease() {
      await run(RELEASE, [lease], [o.holder]);
    },
    async hit(key, windowMs) {
      const [count, left] = (await run(HIT, [`flotilla:rate:${o.service}:${key}`], [String(windowMs)])) as [number, number];
      return { count, resetMs: left };
    },
    async release(key) {
      await run(RELEASE_HIT, [`flotilla:rate:${o.service}:${key}`], []);
    },
    async getSession(id) {
      const reply = (await run(SESSION_GET, [`flotilla:session:${o.service}:${id}`], [])) as [string, number] | null;
      return reply === null ? undefined : { data: reply[0], ttlLeftMs: Math.max(0, reply[1]) };
    },
    async setSession(id, data, ttlMs) {
      await run(SESSION_SET, [`flotilla:session:${o.service}:${id}`], [data, String(Math.max(1, Math.round(ttlMs)))]);
    },
    async deleteSession(id) {
      await run(SESSION_DELETE, [`flotilla:session:${o.service}:${id}`], []);
    },
    async ping() {
      try {
        await client.ping();
        o.link.up();
      } catch (error) {
        o.link.down(error);
        throw error;
      }
    },
    async broadcast(message) {
      await client.publish(channel, message);
    },
    async listen(onMessage) {
      // a connection of its own: a subscribed connection runs no other command; node-redis subscribes again after a reconnection
      subscriber ??= client.duplicate();
      subscriber.on('error', (error: unknown) => o.logger.debug({ err: error }, 'topic subscription connection error'));
      await subscriber.connect().catch((error: unknown) => o.link.down(error));
      await subscriber.subscribe(channel, (message: string) => onMessage(message)).catch((error: unknown) => o.link.down(error));
    },
    async close() {
      o.link.close();
      client.destroy();
      subscriber?.destroy();
    },
  };
}
