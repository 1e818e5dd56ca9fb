import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { Database, Transaction } from './database.ts';

/** `$1` → `?1`: the statements are written once, in PostgreSQL's style (see `Database`). */
const toSqlite = (sql: string) => sql.replace(/\$(\d+)/g, '?$1');

/**
 * The embedded database: Node's built-in `node:sqlite`, a file (WAL mode, so
 * readers in every worker never wait for a writer) or `:memory:` (a database
 * per process), opened by the first statement (so `flotilla openapi` touches
 * no file). Statements are prepared once and kept.
 *
 * Every call runs synchronously on the calling thread: nothing can interrupt
 * a statement once it runs (the thread that would notice the client leaving
 * is the one running it), so `signal` is checked before each statement, and
 * statements are kept short (an index, a `LIMIT`).
 *
 * @example
 * const db = SqliteDatabase.open('data/books.sqlite', { busyTimeoutMs: 5_000 });
 * await db.query('SELECT id FROM books WHERE id = $1', [1]);
 */
export class SqliteDatabase implements Database {
  readonly kind = 'sqlite' as const;
  readonly #file: string;
  readonly #busyTimeoutMs: number;
  readonly #statements = new Map<string, StatementSync>();
  #opened: DatabaseSync | undefined;
  #closed = false;

  private constructor(file: string, busyTimeoutMs: number) {
    this.#file = file;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** `busyTimeoutMs`: how long a statement waits for another process's write lock before failing (a 503). */
  static open(file: string, { busyTimeoutMs }: { busyTimeoutMs: number }): SqliteDatabase {
    return new SqliteDatabase(file, busyTimeoutMs);
  }

  get #db(): DatabaseSync {
    if (this.#opened !== undefined) return this.#opened;
    if (this.#closed) throw new Error('the database is closed');
    const memory = this.#file === ':memory:';
    if (!memory) mkdirSync(dirname(this.#file), { recursive: true });
    const db = new DatabaseSync(this.#file, { timeout: this.#busyTimeoutMs });
    if (!memory) db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    this.#opened = db;
    return db;
  }

  async query<R>(sql: string, params: readonly unknown[] = [], signal?: AbortSignal): Promise<R[]> {
    signal?.throwIfAborted();
    return this.#run<R>(sql, params);
  }

  handle(): DatabaseSync {
    return this.#db;
  }

  async exclusive<T>(_lockKey: number, work: (tx: Transaction) => Promise<T>): Promise<T> {
    // the write lock: another process migrating the same file waits (busy timeout), then sees the result
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = await work({
        query: async <R>(sql: string, params: readonly unknown[] = []) => this.#run<R>(sql, params),
        exec: async (script: string) => this.#db.exec(script),
      });
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#statements.clear();
    this.#opened?.close();
    this.#opened = undefined;
  }

  #run<R>(sql: string, params: readonly unknown[]): R[] {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(toSqlite(sql));
      this.#statements.set(sql, statement);
    }
    // rows come with a null prototype: plain objects for the rest of the service
    return statement.all(...(params as SQLInputValue[])).map((row) => ({ ...row }) as R);
  }
}
