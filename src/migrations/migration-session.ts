import type { MigrationFile } from './migration-files.ts';

/** A row of the migrations' table: a version, and the checksum of its file when it was applied. */
export interface RecordedMigration {
  readonly version: string;
  /** `null`: recorded without one (by the service's own code, or by a runner that kept none). */
  readonly checksum: string | null;
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
   * Applies `file` and records it, in one transaction. Resolves `false`, having
   * changed nothing, when the version is found recorded already (another
   * process sharing the SQLite file applied it meanwhile).
   */
  apply(file: MigrationFile, appliedAt: string): Promise<boolean>;
  /** Records the checksum of a version recorded without one. */
  setChecksum(version: string, checksum: string): Promise<void>;
  /** Gives back the lock and the connection; never throws. */
  close(): Promise<void>;
}
