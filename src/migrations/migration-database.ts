import { createError, describeValue } from '../errors/flotilla-error.ts';

/**
 * A PostgreSQL connection as `migrate()` uses it: `pg`'s `Client` (connected)
 * or a `PoolClient`, or anything with the same `query`. Only the shape is
 * named here: flotilla does not import `pg`, an optional peer dependency.
 */
export interface PostgresConnection {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A connection lent by a pool, given back (or, `release(true)`, closed) when done. */
export interface PostgresPoolClient extends PostgresConnection {
  release(destroy?: boolean | Error): void;
  /** `pg` emits `error` on a connection the server ends; while lent, nothing of the pool's listens. */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool of PostgreSQL connections: `pg`'s `Pool` (told from a `Client` by its `totalCount`). */
export interface PostgresPool extends PostgresConnection {
  connect(): Promise<PostgresPoolClient>;
  readonly totalCount: number;
}

/** An SQLite database as `migrate()` uses it: Node's `node:sqlite` `DatabaseSync`, open. */
export interface SqliteConnection {
  /** Whether a transaction is open (Node 22.16 and later). */
  readonly isTransaction?: boolean;
  exec(sql: string): void;
  prepare(sql: string): {
    all(...params: (string | number | null)[]): unknown[];
    run(...params: (string | number | null)[]): unknown;
  };
}

/** What `migrate({ database })` accepts: a `pg` Pool, Client or PoolClient, or a `node:sqlite` DatabaseSync. */
export type MigrationDatabase = PostgresPool | PostgresConnection | SqliteConnection;

/** Which database it is, and how to reach it. */
export type Recognized =
  | { kind: 'postgres'; pool: PostgresPool }
  | { kind: 'postgres'; connection: PostgresConnection }
  | { kind: 'sqlite'; db: SqliteConnection };

/**
 * Tells the database from its shape, without importing either driver: an
 * object with `prepare` and `exec` (and no `query`) is SQLite; one with
 * `query` is PostgreSQL, a pool when it also has `connect` and a numeric
 * `totalCount` (a pool lends one connection for the whole run), else a
 * connection used as it is. Anything else is `FLO_ERR_BAD_MIGRATE_OPTION`.
 *
 * @example
 * recognize(new pg.Pool()).kind; // 'postgres'
 * recognize(new DatabaseSync(':memory:')).kind; // 'sqlite'
 */
export function recognize(database: unknown): Recognized {
  if (typeof database === 'object' && database !== null) {
    const d = database as Record<string, unknown>;
    if (typeof d['query'] === 'function') {
      if (typeof d['connect'] === 'function' && typeof d['totalCount'] === 'number') {
        return { kind: 'postgres', pool: database as PostgresPool };
      }
      return { kind: 'postgres', connection: database as PostgresConnection };
    }
    if (typeof d['prepare'] === 'function' && typeof d['exec'] === 'function') return { kind: 'sqlite', db: database as SqliteConnection };
  }
  throw createError('FLO_ERR_BAD_MIGRATE_OPTION', {
    reason: `database must be a pg Pool or Client, or a node:sqlite DatabaseSync, got ${describeValue(database)}`,
  });
}
