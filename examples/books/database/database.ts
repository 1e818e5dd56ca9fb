import type { MigrationDatabase } from 'flotilla';

/**
 * What the catalogue needs of a SQL database, implemented over the embedded
 * SQLite (`sqlite-database.ts`) and over PostgreSQL (`postgres-database.ts`).
 * Statements are written once, with PostgreSQL's numbered parameters (`$1`),
 * which the SQLite side rewrites to its own (`?1`); values never enter the text.
 */
export interface Database {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Runs one parameterized statement and resolves with its rows. `signal`
   * cancels it: on PostgreSQL the running statement is cancelled on the
   * server; on SQLite a statement runs on the calling thread, so the signal is
   * checked before it starts (see the guide, "Cancellation").
   */
  query<R>(sql: string, params?: readonly unknown[], signal?: AbortSignal): Promise<R[]>;
  /**
   * The driver's own handle, for flotilla's `migrate()`: the `pg` Pool, or the
   * `node:sqlite` DatabaseSync (the file opened now, if it was not yet).
   */
  handle(): MigrationDatabase;
  /**
   * Runs `work` in one transaction holding the deployment-wide lock `lockKey`:
   * on PostgreSQL a transaction-scoped advisory lock (replicas starting
   * together wait for each other), on SQLite the database's write lock.
   */
  exclusive<T>(lockKey: number, work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Closes the connections; on PostgreSQL, waits for the ones in use until `signal` aborts, then ends them. */
  close(signal?: AbortSignal): Promise<void>;
}

/** A transaction of `Database.exclusive`: statements on one connection. */
export interface Transaction {
  query<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs a script of several statements without parameters (a migration file). */
  exec(script: string): Promise<void>;
}
