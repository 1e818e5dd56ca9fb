import type { Client, ClientConfig, Pool } from 'pg';
import { ClockSkewError, type Coordinator, type CoordinatorOptions, describeError, fireTimeOf, type LeaseAttempt } from './coordinator.ts';
import { importClient } from './import-client.ts';
import { MESSAGES_SCHEMA, postgresTopics } from './postgres-topics.ts';

/**
 * The tables, created when missing (under a transaction-scoped advisory lock, so that replicas
 * starting together do not race on the catalog). A fire's claim is a row of `flotilla_fires`,
 * unique on (service, job, fire_time); a lease's fencing token is a row of `flotilla_leases`.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS flotilla_fires (
  service text NOT NULL,
  job text NOT NULL,
  fire_time timestamptz NOT NULL,
  holder text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (service, job, fire_time)
);
CREATE INDEX IF NOT EXISTS flotilla_fires_by_time ON flotilla_fires (service, fire_time);
CREATE TABLE IF NOT EXISTS flotilla_leases (
  service text PRIMARY KEY,
  token bigint NOT NULL,
  holder text NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT clock_timestamp()
);${MESSAGES_SCHEMA}`;

/**
 * A fire's claim: the insert of its row, only while the server's clock is within $5 ms of the
 * fire time ($3, epoch ms). One round trip; `won` is true for the one insert that made the row.
 */
const CLAIM = `WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $3::bigint AS skew),
claimed AS (
  INSERT INTO flotilla_fires (service, job, fire_time, holder)
  SELECT $1, $2, to_timestamp($3::bigint / 1000.0), $4 FROM clock WHERE abs(skew) <= $5::bigint
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT skew::float8 AS skew, EXISTS (SELECT 1 FROM claimed) AS won FROM clock`;

/** Rows of fires no replica can claim any more (older than the claim window), deleted at most once a minute per replica. */
const PRUNE = `DELETE FROM flotilla_fires WHERE service = $1 AND fire_time < clock_timestamp() - make_interval(secs => $2::float8 / 1000)`;
const PRUNE_EVERY_MS = 60_000;

/**
 * The table of rate limits' fixed windows, created on the first hit (a service without rate limits
 * never has it): one row per service and key, its count and when its window ends.
 */
const RATE_SCHEMA = `
CREATE TABLE IF NOT EXISTS flotilla_rate_limits (
  service text NOT NULL,
  key text NOT NULL,
  count bigint NOT NULL,
  reset_at timestamptz NOT NULL,
  PRIMARY KEY (service, key)
);`;

/**
 * A rate limit's hit, in one statement: the row is inserted with a count of 1 and a window of $3 ms,
 * or, when it exists, locked and either counted once more or, its window over, started again. The
 * row lock of ON CONFLICT DO UPDATE makes concurrent hits of one key count one after the other.
 */
const HIT = `INSERT INTO flotilla_rate_limits AS r (service, key, count, reset_at)
VALUES ($1, $2, 1, clock_timestamp() + make_interval(secs => $3::float8 / 1000))
ON CONFLICT (service, key) DO UPDATE SET
  count = CASE WHEN r.reset_at <= clock_timestamp() THEN 1 ELSE r.count + 1 END,
  reset_at = CASE WHEN r.reset_at <= clock_timestamp() THEN EXCLUDED.reset_at ELSE r.reset_at END
RETURNING r.count::float8 AS count, (extract(epoch FROM r.reset_at - clock_timestamp()) * 1000)::float8 AS reset_ms`;

/** Takes a request back from a window that still runs. */
const RELEASE_HIT = `UPDATE flotilla_rate_limits SET count = count - 1
WHERE service = $1 AND key = $2 AND reset_at > clock_timestamp() AND count > 0`;

/** Rows of windows that ended, deleted at most once a minute per replica. */
const PRUNE_RATE = `DELETE FROM flotilla_rate_limits WHERE service = $1 AND reset_at < clock_timestamp()`;

/**
 * The table of sessions, created on the first use (a service without sessions never has it): one
 * row per service and id, its JSON and when it expires. Expired rows are never read, and are swept
 * by one replica at a time (`SWEEP_SESSIONS`, under a fire claim).
 */
const SESSION_SCHEMA = `
CREATE TABLE IF NOT EXISTS flotilla_sessions (
  service text NOT NULL,
  id text NOT NULL,
  data text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (service, id)
);
CREATE INDEX IF NOT EXISTS flotilla_sessions_by_expiry ON flotilla_sessions (service, expires_at);`;

const SESSION_GET = `SELECT data, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::float8 AS ttl_left_ms
FROM flotilla_sessions WHERE service = $1 AND id = $2 AND expires_at > clock_timestamp()`;
const SESSION_SET = `INSERT INTO flotilla_sessions (service, id, data, expires_at)
VALUES ($1, $2, $3, clock_timestamp() + make_interval(secs => $4::float8 / 1000))
ON CONFLICT (service, id) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`;
const SESSION_DELETE = `DELETE FROM flotilla_sessions WHERE service = $1 AND id = $2`;
const SWEEP_SESSIONS = `DELETE FROM flotilla_sessions WHERE service = $1 AND expires_at < clock_timestamp()`;
/** Expired sessions are swept once a minute, by the one replica whose claim of that minute's fire wins. */
const SWEEP_SESSIONS_EVERY_MS = 60_000;

const NEXT_TOKEN = `INSERT INTO flotilla_leases (service, token, holder) VALUES ($1, 1, $2)
ON CONFLICT (service) DO UPDATE SET token = flotilla_leases.token + 1, holder = EXCLUDED.holder, acquired_at = clock_timestamp()
RETURNING token::float8 AS token`;

/**
 * The PostgreSQL backend, on `pg`. Claims go through a small pool (the pool connects again on the
 * next query after a connection is lost); the lease is a session-level advisory lock
 * (`pg_try_advisory_lock`) held on one connection of its own, renewed by a query on it every
 * `leaseRenewMs`. The session sets `idle_session_timeout` to `leaseTtlMs`: a holder that stops
 * renewing (partitioned, paused, killed) loses its session, and the lock with it, after
 * `leaseTtlMs` at most, as a Redis key would expire; a holder that exits loses it at once. The
 * fencing token is a counter row incremented in the same session right after the lock is taken.
 *
 * @example
 * const coordinator = await postgresCoordinator({ url: 'postgres://flotilla@db/app', service: 'books', … });
 */
export async function postgresCoordinator(o: CoordinatorOptions): Promise<Coordinator> {
  const pg = await importClient<typeof import('pg')>('pg', o.url);
  const config: ClientConfig = {
    connectionString: o.url,
    connectionTimeoutMillis: o.timeoutMs,
    query_timeout: o.timeoutMs,
    statement_timeout: o.timeoutMs,
    keepAlive: true,
    application_name: `flotilla ${o.service}`,
  };
  const pool: Pool = new pg.Pool({ ...config, max: 4, idleTimeoutMillis: 30_000 });
  // an idle connection the server closed (a restart): the pool replaces it on the next query
  pool.on('error', (error) => o.link.down(error));
  let sessionsSweptAt = Date.now();
  let prunedAt = 0;
  let ratePrunedAt = Date.now();
  let session: Client | undefined;
  /** Whether the session's lock was taken (and not given up since). */
  let holding = false;
  /** Why the session ended on its own (the connection lost, the server's idle timeout). */
  let sessionLost: unknown;

  const tracked = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      const result = await work();
      o.link.up();
      return result;
    } catch (error) {
      o.link.down(error);
      throw error;
    }
  };
  /** Creates tables when missing, under a transaction-scoped advisory lock (replicas starting together). */
  const createTables = async (sql: string): Promise<void> => {
    const client = await pool.connect();
    // pg-pool listens for a client's errors only while it is idle: a connection lost while checked out
    // would otherwise be an uncaught 'error' (the failing query rejects anyway)
    const ignore = () => {};
    client.on('error', ignore);
    try {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('flotilla:schema', 0))");
      await client.query(sql);
      await client.query('COMMIT');
      client.off('error', ignore);
      client.release();
    } catch (error) {
      client.off('error', ignore);
      client.release(true);
      throw error;
    }
  };
  /** Creates the tables of `sql` on the first call; a failed attempt is tried again by the next. */
  const tablesOnce = (sql: string): (() => Promise<void>) => {
    let created: Promise<void> | undefined;
    return () => {
      created ??= createTables(sql).catch((error: unknown) => {
        created = undefined;
        throw error;
      });
      return created;
    };
  };
  const ensureSchema = tablesOnce(SCHEMA);
  const ensureRateSchema = tablesOnce(RATE_SCHEMA);
  const ensureSessionSchema = tablesOnce(SESSION_SCHEMA);
  /** A fire's claim (see `Coordinator.claim`), without the pruning of old ones. */
  const claimFire = async (key: string, ttlMs: number): Promise<boolean> => {
    const { job, at } = fireTimeOf(key);
    const { skew, won } = await tracked(async () => {
      await ensureSchema();
      const { rows } = await pool.query<{ skew: number; won: boolean }>({
        name: 'flotilla-claim',
        text: CLAIM,
        values: [o.service, job, at, o.holder, Math.floor(ttlMs / 2)],
      });
      return rows[0] ?? { skew: 0, won: false };
    });
    if (Math.abs(skew) > ttlMs / 2) throw new ClockSkewError(key, skew, ttlMs / 2);
    return won;
  };
  /** Once a minute per replica, a claim of the minute's sweep: the replica that wins it deletes the expired sessions. */
  const sweepSessions = () => {
    const now = Date.now();
    if (now - sessionsSweptAt < SWEEP_SESSIONS_EVERY_MS) return;
    sessionsSweptAt = now;
    const minute = new Date(now - (now % SWEEP_SESSIONS_EVERY_MS));
    const fire = `flotilla:sweep-sessions:${minute.toISOString()}`;
    claimFire(fire, 2 * SWEEP_SESSIONS_EVERY_MS)
      .then((won) => (won ? pool.query(SWEEP_SESSIONS, [o.service]) : undefined))
      .catch((error: unknown) => o.logger.debug({ error: describeError(error) }, 'sweeping expired sessions failed'));
  };
  const pruneRate = () => {
    if (Date.now() - ratePrunedAt < PRUNE_EVERY_MS) return;
    ratePrunedAt = Date.now();
    pool
      .query(PRUNE_RATE, [o.service])
      .catch((error: unknown) => o.logger.debug({ error: describeError(error) }, 'pruning ended rate-limit windows failed'));
  };
  const endSession = async (): Promise<void> => {
    const ending = session;
    session = undefined;
    holding = false;
    // a clean end when the server answers; otherwise the socket goes, and the server drops the session on its side
    await ending?.end().catch(() => {});
  };
  const openSession = async (): Promise<Client> => {
    if (session !== undefined) return session;
    const client = new pg.Client({ ...config, application_name: `flotilla ${o.service} lease` });
    client.on('error', (error) => {
      o.link.down(error);
      if (session === client) {
        session = undefined;
        sessionLost = error;
      }
    });
    try {
      await client.connect();
      await client.query("SELECT set_config('idle_session_timeout', $1, false)", [String(o.leaseTtlMs)]).catch((error: unknown) => {
        // PostgreSQL before 14: no idle_session_timeout (42704, unrecognized configuration parameter)
        if ((error as { code?: unknown }).code !== '42704') throw error;
        o.logger.warn(
          'PostgreSQL before 14 has no idle_session_timeout: a lease holder that stops renewing without its connection closing keeps the lease until the server notices',
        );
      });
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    session = client;
    return client;
  };
  const prune = (ttlMs: number) => {
    if (Date.now() - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = Date.now();
    pool
      .query(PRUNE, [o.service, ttlMs])
      .catch((error: unknown) => o.logger.debug({ error: describeError(error) }, 'pruning old fire claims failed'));
  };

  // the first connection (and the tables) before the schedulers start, `timeoutMs` at most; fires are skipped until then
  await tracked(ensureSchema).catch(() => {});
  const topics = postgresTopics(pg, config, o, pool, ensureSchema);

  return {
    backend: 'postgres',
    async claim(key, ttlMs) {
      const won = await claimFire(key, ttlMs);
      if (won) prune(ttlMs);
      return won;
    },
    async acquireLease(): Promise<LeaseAttempt> {
      return tracked(async () => {
        await ensureSchema();
        const client = await openSession();
        const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [
          `flotilla:lease:${o.service}`,
        ]);
        holding = rows[0]?.locked === true;
        if (!holding) return { held: false, retryInMs: o.leaseRenewMs };
        const { rows: token } = await client.query<{ token: number }>(NEXT_TOKEN, [o.service, o.holder]);
        return { held: true, token: token[0]?.token ?? 0 };
      });
    },
    async renewLease() {
      const client = session;
      if (!holding) return false;
      if (client === undefined) throw sessionLost ?? new Error('the session holding the lease ended');
      await tracked(() => client.query('SELECT 1'));
      return session === client;
    },
    releaseLease: endSession,
    async hit(key, windowMs) {
      const row = await tracked(async () => {
        await ensureRateSchema();
        const { rows } = await pool.query<{ count: number; reset_ms: number }>({
          name: 'flotilla-rate-hit',
          text: HIT,
          values: [o.service, key, windowMs],
        });
        return rows[0];
      });
      if (row === undefined) throw new Error('the rate-limit upsert returned no row');
      pruneRate();
      return { count: row.count, resetMs: Math.max(0, row.reset_ms) };
    },
    async release(key) {
      await tracked(async () => {
        await ensureRateSchema();
        await pool.query({ name: 'flotilla-rate-release', text: RELEASE_HIT, values: [o.service, key] });
      });
    },
    async getSession(id) {
      const row = await tracked(async () => {
        await ensureSessionSchema();
        const { rows } = await pool.query<{ data: string; ttl_left_ms: number }>({
          name: 'flotilla-session-get',
          text: SESSION_GET,
          values: [o.service, id],
        });
        return rows[0];
      });
      sweepSessions();
      return row === undefined ? undefined : { data: row.data, ttlLeftMs: Math.max(0, row.ttl_left_ms) };
    },
    async setSession(id, data, ttlMs) {
      await tracked(async () => {
        await ensureSessionSchema();
        await pool.query({ name: 'flotilla-session-set', text: SESSION_SET, values: [o.service, id, data, ttlMs] });
      });
    },
    async deleteSession(id) {
      await tracked(async () => {
        await ensureSessionSchema();
        await pool.query({ name: 'flotilla-session-delete', text: SESSION_DELETE, values: [o.service, id] });
      });
    },
    async ping() {
      await tracked(() => pool.query('SELECT 1'));
    },
    broadcast: (message) => tracked(() => topics.broadcast(message)),
    listen: (onMessage) => topics.listen(onMessage),
    async close() {
      o.link.close();
      await topics.close();
      await endSession();
      await pool.end().catch(() => {});
    },
  };
}
