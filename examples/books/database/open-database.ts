import type { Logger } from 'pino';
import type { BooksSettings } from '../settings.ts';
import type { Database } from './database.ts';
import { withoutSqliteWarning } from './quiet-sqlite.ts';

/** Connections of the primary's own pool: it runs the migrations and the report job, and serves nothing. */
const PRIMARY_POOL_SIZE = 1;

/**
 * The catalogue's database, chosen by the settings: PostgreSQL when
 * `databaseUrl` is set (a pool of `poolSize` connections per worker, one in
 * the primary), else the embedded SQLite file `databaseFile`. Each driver is
 * imported only when chosen: a PostgreSQL deployment never loads `node:sqlite`,
 * and `pg` (an optional peer dependency) need not be installed for the embedded one.
 * Nothing connects here: the first statement does.
 *
 * @example
 * const db = await openDatabase(app.settings, { logger: app.logger, primary: app.role === 'primary' });
 */
export async function openDatabase(settings: BooksSettings, o: { logger: Logger; primary: boolean }): Promise<Database> {
  const url = settings.databaseUrl;
  if (url !== undefined && url !== '') {
    const { PostgresDatabase } = await import('./postgres-database.ts');
    const poolSize = o.primary ? PRIMARY_POOL_SIZE : settings.poolSize;
    o.logger.debug({ poolSize }, 'books in PostgreSQL');
    return PostgresDatabase.connect({ url, poolSize, statementTimeoutMs: settings.statementTimeoutMs, logger: o.logger });
  }
  const { SqliteDatabase } = await withoutSqliteWarning(() => import('./sqlite-database.ts'));
  o.logger.debug({ file: settings.databaseFile }, 'books in the embedded SQLite database');
  return SqliteDatabase.open(settings.databaseFile, { busyTimeoutMs: settings.statementTimeoutMs || 5_000 });
}
