import { createError, describeValue } from '../errors/flotilla-error.ts';
import { type MigrationDatabase, recognize } from './migration-database.ts';
import { MigrationError } from './migration-error.ts';
import { readMigrations } from './migration-files.ts';
import { planMigrations } from './migration-plan.ts';
import { type MigrationLogger, type MigrationSession, StatementFailure } from './migration-session.ts';
import { defaultLockKey, openPostgresSession } from './postgres-migrations.ts';
import { openSqliteSession } from './sqlite-migrations.ts';

export type { MigrationDatabase } from './migration-database.ts';
export { MigrationError } from './migration-error.ts';
export type { MigrationLogger } from './migration-session.ts';

/** What `migrate()` is given. */
export interface MigrateOptions {
  /** The folder of the SQL files (`0001-books.sql`, `0002-…`): a path (relative to the working directory) or a `file:` URL. */
  dir: string | URL;
  /** A `pg` Pool (one connection is lent for the run), Client or PoolClient (connected), or a `node:sqlite` DatabaseSync. */
  database: MigrationDatabase;
  /** The table recording what was applied, `schema.name` allowed. Default `schema_migrations`. */
  table?: string | undefined;
  /** PostgreSQL: the advisory lock's key (an int64). Default: derived from `table`, the same in every replica. */
  lockKey?: number | bigint | undefined;
  /** Where the applied files and the warnings are logged (`app.logger`). Without one, warnings are process warnings. */
  logger?: MigrationLogger | undefined;
  /** Stops the run between files (a `beforeServe` hook's signal: a shutdown during the start). */
  signal?: AbortSignal | undefined;
}

/** What a run did. */
export interface MigrateResult {
  /** The versions applied by this run, in order (file names without `.sql`); empty when everything was recorded. */
  applied: string[];
}

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

/**
 * Applies the SQL files of `dir` that the database has not recorded yet, in
 * the order of their numbers, and records each in `schema_migrations`
 * (`version`, `checksum`, `applied_at`), in the same transaction as the file.
 * A file already recorded is skipped, even if it was edited since (a warning:
 * write a new file instead); a recorded version whose file is gone is a
 * warning. A file the database refuses rejects with a `MigrationError`
 * naming it: the files before it stay applied.
 *
 * A file whose opening comments say `-- flotilla: no-transaction` runs
 * outside a transaction, for what refuses one (`CREATE INDEX CONCURRENTLY`):
 * on PostgreSQL its statements are sent one at a time
 * (`src/migrations/sql-statements.ts`), on SQLite the file is run as it is;
 * its row is written once they have all run. One that fails is not rolled
 * back: the statements before it stay, the file is not recorded, and the next
 * run starts it again, so write it to run twice (`IF NOT EXISTS`).
 *
 * PostgreSQL (a `pg` Pool or Client): one connection holds
 * `pg_advisory_lock(lockKey)` for the run, so replicas starting together run
 * it once. SQLite (a `node:sqlite` DatabaseSync): each file in a `BEGIN
 * IMMEDIATE` transaction, serialising the processes that share the file. Run
 * it in `app.beforeServe`: once per deployment, before any worker serves.
 *
 * @example
 * import { defineService, migrate } from 'flotilla';
 * import pg from 'pg';
 *
 * export default defineService((app) => {
 *   const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 *   app.beforeServe(async (signal) => {
 *     await migrate({ dir: new URL('./migrations/', import.meta.url), database: pool, logger: app.logger, signal });
 *   });
 *   app.onShutdown(() => pool.end());
 * });
 */
export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
  if (typeof options !== 'object' || options === null) throw badOption(`expects { dir, database }, got ${describeValue(options)}`);
  const { dir, signal } = options;
  if (typeof dir !== 'string' && !(dir instanceof URL)) throw badOption(`dir must be a path or a file: URL, got ${describeValue(dir)}`);
  const table = options.table ?? 'schema_migrations';
  if (typeof table !== 'string' || !TABLE.test(table))
    throw badOption(`table must be a table name (name or schema.name), got ${describeValue(table)}`);
  const lockKey = lockKeyOf(options.lockKey, table);
  const target = recognize(options.database);
  const logger = options.logger ?? warningsOnly;
  const files = readMigrations(dir);
  signal?.throwIfAborted();

  const session: MigrationSession =
    target.kind === 'sqlite' ? openSqliteSession(target.db, table) : await openPostgresSession(target, { table, lockKey, logger, signal });
  const applied: string[] = [];
  try {
    const plan = planMigrations(files, await session.recorded());
    for (const version of plan.missing) {
      logger.warn({ migration: version, table }, `migration ${version} is recorded in ${table} but its file is gone`);
    }
    for (const file of plan.changed) {
      logger.warn({ migration: file.version, file: file.path }, `migration ${file.name} changed after it was applied: not applied again`);
    }
    for (const file of plan.unchecked) await session.setChecksum(file.version, file.checksum);
    for (const file of plan.pending) {
      signal?.throwIfAborted();
      const started = performance.now();
      let done: boolean;
      try {
        done = await session.apply(file, new Date().toISOString());
      } catch (error) {
        throw error instanceof StatementFailure ? new MigrationError(file, error.cause, error.offset) : new MigrationError(file, error);
      }
      if (!done) continue;
      applied.push(file.version);
      logger.info({ migration: file.version, ms: Math.round(performance.now() - started) }, `migration ${file.name} applied`);
    }
  } finally {
    await session.close();
  }
  return { applied };
}

function badOption(reason: string) {
  return createError('FLO_ERR_BAD_MIGRATE_OPTION', { reason });
}

/** The advisory lock's key: given (an integer within int64), or derived from the table's name. */
function lockKeyOf(given: unknown, table: string): bigint {
  if (given === undefined) return defaultLockKey(table);
  const key = typeof given === 'bigint' ? given : Number.isSafeInteger(given) ? BigInt(given as number) : undefined;
  if (key === undefined || key < INT64.min || key > INT64.max) {
    throw badOption(`lockKey must be a safe integer or a bigint within int64, got ${describeValue(given)}`);
  }
  return key;
}

/** Without a logger: nothing for the applied files, a process warning for each warning. */
const warningsOnly: MigrationLogger = {
  info() {},
  warn(_fields, message) {
    process.emitWarning(message, { type: 'MigrationWarning' });
  },
};
