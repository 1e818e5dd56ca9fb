import type { Client, Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import type { Database, Transaction } from './database.ts';

/** Waiting longer than this for a connection (a server down, a pool exhausted) fails the statement: a 503. */
const CONNECT_TIMEOUT_MS = 3_000;

export interface PostgresOptions {
  url: string;
  /** Connections of this process's pool. */
  poolSize: number;
  /** `statement_timeout` of the sessions (0: none). */
  statementTimeoutMs: number;
  logger: Logger;
}

/** node-postgres's cancel request (a CancelRequest on a connection of its own), missing from its types. */
type Cancelling = Client & { cancel(target: PoolClient, query: unknown): void };

/**
 * PostgreSQL through `pg` (an optional peer dependency: imported only when a
 * `databaseUrl` is set), one pool per process. A statement whose `signal`
 * aborts is cancelled on the server: node-postgres sends a CancelRequest with
 * the backend's key on a fresh connection (no pool slot, no waiting), and the
 * connection that ran it is closed rather than returned to the pool, so a
 * cancel that arrives late can never hit the next statement run on it.
 *
 * @example
 * const db = await PostgresDatabase.connect({ url, poolSize: 5, statementTimeoutMs: 5_000, logger });
 * await db.query('SELECT id FROM books WHERE id = $1', [1], ctx.signal);
 */
export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  readonly #pg: typeof import('pg');
  readonly #pool: Pool;
  readonly #url: string;

  private constructor(pg: typeof import('pg'), pool: Pool, url: string) {
    this.#pg = pg;
    this.#pool = pool;
    this.#url = url;
  }

  static async connect(o: PostgresOptions): Promise<PostgresDatabase> {
    let pg: typeof import('pg');
    try {
      pg = await import('pg');
    } catch (error) {
      throw new Error('settings.databaseUrl is set but "pg" is not installed: npm install pg', { cause: error });
    }
    const pool = new pg.Pool({
      connectionString: o.url,
      max: o.poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      ...(o.statementTimeoutMs > 0 ? { statement_timeout: o.statementTimeoutMs } : {}),
      application_name: 'books',
    });
    // a connection the server drops (a restart, an administrator) is an event, not a crash. node-postgres emits it on
    // the connection: the pool listens on the idle ones only, so each connection gets a listener of its own, for the
    // time it is checked out too; its work then fails, and the connection is closed at release (`isConnectionError`).
    // The pool connects again on the next query.
    pool.on('connect', (client) => client.on('error', (err) => o.logger.warn({ err }, 'database connection lost')));
    // the pool's own event repeats an idle connection's: logged above
    pool.on('error', () => {});
    return new PostgresDatabase(pg, pool, o.url);
  }

  async query<R>(sql: string, params: readonly unknown[] = [], signal?: AbortSignal): Promise<R[]> {
    signal?.throwIfAborted();
    const client = await this.#acquire(signal);
    let cancelled = false;
    let broken: unknown;
    const cancel = () => {
      cancelled = true;
      const canceller = new this.#pg.Client({ connectionString: this.#url }) as Cancelling;
      // a cancel that cannot reach the server is moot (the statement ends with its connection), never a crash
      canceller.connection.on('error', () => {});
      canceller.cancel(client, (client as unknown as { activeQuery: unknown }).activeQuery);
    };
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return (await client.query(sql, params as unknown[])).rows as R[];
    } catch (error) {
      broken = error;
      if (cancelled) throw signal?.reason ?? error;
      throw error;
    } finally {
      signal?.removeEventListener('abort', cancel);
      // a cancelled or failed connection is closed, not reused (its session's state is unknown)
      client.release(cancelled || (broken !== undefined && isConnectionError(broken)));
    }
  }

  handle(): Pool {
    return this.#pool;
  }

  async exclusive<T>(lockKey: number, work: (tx: Transaction) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let failed = false;
    try {
      await client.query('BEGIN');
      // released at COMMIT/ROLLBACK: a replica starting at the same moment waits here, then finds the work done
      await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
      const result = await work({
        query: async <R>(sql: string, params: readonly unknown[] = []) => (await client.query(sql, params as unknown[])).rows as R[],
        exec: async (script: string) => void (await client.query(script)),
      });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failed = true;
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release(failed);
    }
  }

  /**
   * Ends the pool: waits for the connections in use to be released, until `signal` aborts (the
   * shutdown's deadline); then the remaining ones are closed as the process exits.
   */
  async close(signal?: AbortSignal): Promise<void> {
    const ended = this.#pool.end();
    if (signal === undefined) return ended;
    signal.throwIfAborted();
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    ended.then(resolve, reject);
    try {
      await promise;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** A pooled connection; a request that leaves while waiting for one stops waiting (the connection goes back). */
  async #acquire(signal: AbortSignal | undefined): Promise<PoolClient> {
    const connecting = this.#pool.connect();
    if (signal === undefined) return connecting;
    const { promise, resolve, reject } = Promise.withResolvers<PoolClient>();
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(signal.reason);
      connecting.then(
        (client) => client.release(),
        () => {},
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
    connecting.then(
      (client) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        resolve(client);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        reject(error);
      },
    );
    return promise;
  }
}

/** An error of the connection itself (not of the statement): it is not put back into the pool. */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code.startsWith('57P');
}
