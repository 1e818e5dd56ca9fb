import { readdirSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Book } from '../book.ts';
import type { Database, Transaction } from './database.ts';

/** The advisory lock's key on PostgreSQL: one number the catalogue's migrations agree on. */
export const MIGRATION_LOCK_KEY = 0x626f6f6b; // "book"

/** The step recorded once the seed books are in: the seed is inserted by the first start only. */
export const SEED_VERSION = 'seed-books';

/** Books inserted per statement (6 parameters each: well under PostgreSQL's 65 535 and SQLite's 32 766). */
const SEED_BATCH = 500;

const MIGRATIONS = new URL('../migrations/', import.meta.url);

export interface MigrationOptions {
  logger: Logger;
  /** The seed books, inserted on the first start only (when `SEED_VERSION` is not recorded yet). */
  seed(): Book[];
}

/** What a run did: the versions applied now (empty when the database was up to date). */
export interface MigrationRun {
  applied: string[];
}

/** The SQL files of a database kind, by name (`0001-books.sql`, `0002-…`): the order they apply in. */
export function migrationFiles(kind: Database['kind']): { version: string; sql: string }[] {
  const dir = new URL(`${kind}/`, MIGRATIONS);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({ version: name.slice(0, -'.sql'.length), sql: readFileSync(new URL(name, dir), 'utf8') }));
}

/**
 * Brings the schema up to date, then seeds it once: the SQL files not yet
 * recorded in `schema_migrations` apply in name order, each recorded as it
 * applies, all in one transaction holding the deployment-wide lock
 * (`Database.exclusive`: an advisory lock on PostgreSQL). Replicas starting
 * together queue on the lock; the second finds everything recorded and does
 * nothing. A failure rolls the whole run back: the next start tries again.
 *
 * @example
 * app.beforeServe(() => migrate(db, { logger: app.logger, seed: () => sampleBooks(5_000) }));
 */
export async function migrate(db: Database, o: MigrationOptions): Promise<MigrationRun> {
  const files = migrationFiles(db.kind);
  const started = performance.now();
  const applied = await db.exclusive(MIGRATION_LOCK_KEY, async (tx) => {
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at text NOT NULL)');
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const now: string[] = [];
    const record = async (version: string) => {
      await tx.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version, new Date().toISOString()]);
      now.push(version);
    };
    for (const { version, sql } of files) {
      if (done.has(version)) continue;
      await tx.exec(sql);
      await record(version);
    }
    if (!done.has(SEED_VERSION)) {
      await insertBooks(tx, o.seed());
      await record(SEED_VERSION);
    }
    return now;
  });
  const ms = Math.round(performance.now() - started);
  if (applied.length === 0) o.logger.info({ database: db.kind, ms }, 'database schema up to date');
  else o.logger.info({ database: db.kind, applied, ms }, 'database migrated');
  return { applied };
}

/** Inserts `books` in batches, in order: on a new table their ids come out as 1, 2, … as in `sampleBooks`. */
async function insertBooks(tx: Transaction, books: readonly Book[]): Promise<void> {
  for (let i = 0; i < books.length; i += SEED_BATCH) {
    const batch = books.slice(i, i + SEED_BATCH);
    const values = batch.map((_, j) => `($${j * 5 + 1}, $${j * 5 + 2}, $${j * 5 + 3}, $${j * 5 + 4}, $${j * 5 + 5})`);
    const params = batch.flatMap((b) => [b.isbn, b.title, b.author, b.year, b.pages]);
    await tx.query(`INSERT INTO books (isbn, title, author, year, pages) VALUES ${values.join(', ')}`, params);
  }
}
