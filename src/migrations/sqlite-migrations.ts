import { createError } from '../errors/flotilla-error.ts';
import type { SqliteConnection } from './migration-database.ts';
import type { MigrationSession, RecordedMigration } from './migration-session.ts';

/**
 * A run on SQLite (`node:sqlite`'s `DatabaseSync`). Each file is applied in a
 * `BEGIN IMMEDIATE` transaction, which takes the database's write lock at
 * once: a second process migrating the same file waits there (for the
 * connection's busy timeout), then finds the version recorded and skips it.
 * So processes sharing a file need no other lock; once per deployment comes
 * from running it in the primary's `beforeServe`. The statements run on the
 * calling thread, start to end: nothing interrupts one, so `signal` is seen
 * between files. A file that says `-- flotilla: no-transaction` is run as it
 * is, each statement committed as it runs, then recorded: processes sharing
 * the database that start together may each run it (write it to run twice).
 *
 * @example
 * const session = openSqliteSession(new DatabaseSync('data/app.sqlite', { timeout: 5_000 }), 'schema_migrations');
 */
export function openSqliteSession(db: SqliteConnection, table: string): MigrationSession {
  if (db.isTransaction === true) {
    throw createError('FLO_ERR_BAD_MIGRATE_OPTION', {
      reason: 'the SQLite connection is inside a transaction; migrate() runs its own, one per file',
    });
  }
  db.exec(`CREATE TABLE IF NOT EXISTS ${table} (version TEXT PRIMARY KEY, checksum TEXT, applied_at TEXT NOT NULL)`);
  const select = () => db.prepare(`SELECT version, checksum FROM ${table}`).all() as RecordedMigration[];
  return {
    async recorded() {
      try {
        return select().map(({ version, checksum }) => ({ version, checksum }));
      } catch (error) {
        if (!/no such column: checksum/.test((error as Error).message)) throw error;
        // a table another runner created (version, applied_at): adopted, its rows checked from now on
        transaction(db, () => {
          const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
          if (!columns.some((c) => c.name === 'checksum')) db.exec(`ALTER TABLE ${table} ADD COLUMN checksum TEXT`);
        });
        return select().map(({ version, checksum }) => ({ version, checksum }));
      }
    },
    async apply(file, appliedAt) {
      if (!file.transaction) {
        // outside a transaction: each statement commits as it runs; the write lock is taken for the row only
        if (db.prepare(`SELECT 1 AS found FROM ${table} WHERE version = ?`).all(file.version).length > 0) return false;
        db.exec(file.sql);
        return transaction(db, () => {
          // another process ran it meanwhile, and recorded it first
          if (db.prepare(`SELECT 1 AS found FROM ${table} WHERE version = ?`).all(file.version).length > 0) return false;
          db.prepare(`INSERT INTO ${table} (version, checksum, applied_at) VALUES (?, ?, ?)`).run(file.version, file.checksum, appliedAt);
          return true;
        });
      }
      return transaction(db, () => {
        if (db.prepare(`SELECT 1 AS found FROM ${table} WHERE version = ?`).all(file.version).length > 0) return false;
        db.exec(file.sql);
        db.prepare(`INSERT INTO ${table} (version, checksum, applied_at) VALUES (?, ?, ?)`).run(file.version, file.checksum, appliedAt);
        return true;
      });
    },
    async setChecksum(version, checksum) {
      db.prepare(`UPDATE ${table} SET checksum = ? WHERE version = ? AND checksum IS NULL`).run(checksum, version);
    },
    async close() {},
  };
}

/**
 * Runs `work` in a `BEGIN IMMEDIATE` transaction: committed when it returns,
 * rolled back when it throws. A `BEGIN` that fails (the connection already in
 * a transaction of its caller) throws before anything could be rolled back.
 */
function transaction<T>(db: SqliteConnection, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // no transaction left to roll back (a file that ended it itself): the error to report is the first
    }
    throw error;
  }
}
