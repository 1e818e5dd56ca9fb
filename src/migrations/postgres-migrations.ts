import { createHash } from 'node:crypto';
import type { PostgresConnection, PostgresPool, PostgresPoolClient } from './migration-database.ts';
import { type MigrationLogger, type MigrationSession, type RecordedMigration, StatementFailure } from './migration-session.ts';
import { splitStatements } from './sql-statements.ts';

export interface PostgresSessionOptions {
  table: string;
  lockKey: bigint;
  logger: MigrationLogger;
  signal: AbortSignal | undefined;
}

/**
 * The advisory lock's key when none is given: the first 8 bytes of
 * sha256(`flotilla:migrate:<table>`), as PostgreSQL's signed bigint. Services
 * sharing a database with tables of their own do not wait for each other.
 *
 * @example
 * defaultLockKey('schema_migrations'); // the same bigint in every replica
 */
export function defaultLockKey(table: string): bigint {
  const digest = createHash('sha256').update(`flotilla:migrate:${table}`).digest();
  return digest.readBigInt64BE(0);
}

/**
 * A run on PostgreSQL, on one connection (lent by the pool for the whole run,
 * or the `Client` given): a session-level advisory lock `pg_advisory_lock(key)`
 * held from before the table is read until the run ends, so replicas started
 * together run one after the other, the later ones finding everything
 * recorded. Each file is then applied in a transaction of its own with its
 * row: a failure rolls back that file only, the earlier ones stay applied. A
 * file that says `-- flotilla: no-transaction` is sent one statement at a time
 * (a string of several would be one implicit transaction), then its row. The
 * lock goes with the session: a process that dies releases it.
 *
 * While it waits for the lock a line says so; an abort of `signal` meanwhile
 * closes a lent connection (the wait ends there; a `Client` given keeps
 * waiting, and the run stops once it has the lock).
 *
 * @example
 * const session = await openPostgresSession({ pool }, { table: 'schema_migrations', lockKey, logger, signal });
 */
export async function openPostgresSession(
  target: { pool: PostgresPool } | { connection: PostgresConnection },
  o: PostgresSessionOptions,
): Promise<MigrationSession> {
  const { table, signal } = o;
  const key = String(o.lockKey);
  let lent: PostgresPoolClient | undefined = 'pool' in target ? await target.pool.connect() : undefined;
  const db: PostgresConnection = lent ?? (target as { connection: PostgresConnection }).connection;
  let broken = false;
  let locked = false;
  // a lent connection the server ends between two statements (a restart, an administrator): the next statement fails,
  // and without a listener of its own the `error` node-postgres emits would end the process
  const lost = (error: Error) => {
    broken = true;
    o.logger.warn({ err: error }, 'migrations: the database connection was lost');
  };
  lent?.on?.('error', lost);
  /** Gives a lent connection back to its pool; closes it when its state is unknown (an error, an abort). */
  const giveBack = () => {
    const client = lent;
    lent = undefined;
    client?.removeListener?.('error', lost);
    client?.release(broken);
  };

  const onAbort = () => {
    broken = true;
    giveBack();
  };
  try {
    signal?.throwIfAborted();
    const [first] = (await db.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key])).rows as { locked: boolean }[];
    if (first?.locked !== true) {
      o.logger.info({ lockKey: key }, 'migrations: waiting for another process running them (PostgreSQL advisory lock)');
      // only a lent connection can be closed to end the wait: a Client given stays its owner's
      if (lent !== undefined) signal?.addEventListener('abort', onAbort, { once: true });
      try {
        await db.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    }
    locked = true;
    signal?.throwIfAborted();
    await db.query(`CREATE TABLE IF NOT EXISTS ${table} (version text PRIMARY KEY, checksum text, applied_at timestamptz NOT NULL)`);
  } catch (error) {
    if (!locked) broken = true; // a connection that failed before it held the lock is not lent again
    await close();
    throw signal?.aborted ? signal.reason : error;
  }

  /** Releases the lock, then the connection; a lent connection whose unlock fails is closed, which ends the lock with the session. */
  async function close(): Promise<void> {
    if (locked) {
      locked = false;
      try {
        await db.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
      } catch {
        broken = true;
      }
    }
    giveBack();
  }

  const select = async () => (await db.query(`SELECT version, checksum FROM ${table}`)).rows as RecordedMigration[];
  return {
    async recorded() {
      try {
        return await select();
      } catch (error) {
        if ((error as { code?: unknown }).code !== '42703') throw error; // undefined_column
        // a table another runner created (version, applied_at): adopted, its rows checked from now on
        await db.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS checksum text`);
        return await select();
      }
    },
    async apply(file, appliedAt) {
      const record = () =>
        db.query(`INSERT INTO ${table} (version, checksum, applied_at) VALUES ($1, $2, $3)`, [file.version, file.checksum, appliedAt]);
      if (!file.transaction) {
        for (const statement of splitStatements(file.sql)) {
          await db.query(statement.text).catch((error: unknown) => {
            throw new StatementFailure(statement.offset, error);
          });
        }
        await record();
        return true;
      }
      await db.query('BEGIN');
      try {
        await db.query(file.sql);
        await record();
        await db.query('COMMIT');
        return true;
      } catch (error) {
        await db.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      }
    },
    async setChecksum(version, checksum) {
      await db.query(`UPDATE ${table} SET checksum = $1 WHERE version = $2 AND checksum IS NULL`, [checksum, version]);
    },
    close,
  };
}
