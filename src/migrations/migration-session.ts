import type { MigrationFile } from './migration-files.ts';

/** A row of the migrations' table: a version, and the checksum of its file when it was applied. */
export interface RecordedMigration {
  readonly version: string;
  /** `null`: recorded without one (by the service's own code, or by a runner that kept none). */
  readonly checksum: string | null;
}

/**
 * A statement of a file run outside a transaction failed: the database's error (`cause`), and
 * where the statement begins in the file, for the line `MigrationError` names.
 *
 * @example
 * throw new StatementFailure(statement.offset, error);
 */
export class StatementFailure extends Error {
  readonly offset: number;

  constructor(offset: number, cause: unknown) {
    super('a statement of the migration failed', { cause });
    this.offset = offset;
  }
}

/**
 * Where `migrate()` writes its lines: a pino logger (`app.logger`) fits.
 *
 * @example
 * await migrate({ dir, database, logger: app.logger });
 */
export interface MigrationLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * One run of `migrate()` on one database, its lock held (PostgreSQL) and its
 * table created: what the run loop (`migrate.ts`) asks of each database.
 */
export interface MigrationSession {
  /** The rows of the table, read once the lock is held. */
  recorded(): Promise<RecordedMigration[]>;
  /**
   * Applies `file` and records it, in one transaction (a file that says
   * `-- flotilla: no-transaction`: statement by statement, then its row).
   * Resolves `false`, having changed nothing, when the version is found
   * recorded already (another process sharing the SQLite file applied it
   * meanwhile). A statement of a file run statement by statement that fails
   * rejects with a {@link StatementFailure}.
   */
  apply(file: MigrationFile, appliedAt: string): Promise<boolean>;
  /** Records the checksum of a version recorded without one. */
  setChecksum(version: string, checksum: string): Promise<void>;
  /** Gives back the lock and the connection; never throws. */
  close(): Promise<void>;
}
