import { migrate } from 'flotilla';
import type { Logger } from 'pino';
import type { Book } from '../book.ts';
import type { Database, Transaction } from './database.ts';

/** The step recorded once the seed books are in: the seed is inserted by the first start only. */
export const SEED_VERSION = 'seed-books';

/** The seed's advisory lock on PostgreSQL: one number the catalogue's replicas agree on. */
const SEED_LOCK_KEY = 0x626f6f6b; // "book"

/** Books inserted per statement (5 parameters each: well under PostgreSQL's 65 535 and SQLite's 32 766). */
const SEED_BATCH = 500;

/** The SQL files of a database kind, `migrations/sqlite/` or `migrations/postgres/`: the same versions, each in its dialect. */
export function migrationsOf(kind: Database['kind']): URL {
  return new URL(`../migrations/${kind}/`, import.meta.url);
}

export interface BooksMigrationOptions {
  logger: Logger;
  /** The seed books, inserted on the first start only (when `SEED_VERSION` is not recorded yet). */
  seed(): Book[];
  /** The `beforeServe` hook's signal: a shutdown during the start stops the run between files. */
  signal?: AbortSignal | undefined;
}

/**
 * Brings the schema up to date with flotilla's `migrate()` (the SQL files of
 * `migrations/<kind>/`, each in its own transaction, recorded in
 * `schema_migrations`; on PostgreSQL under an advisory lock, so replicas
 * starting together run them once), then seeds the catalogue once: a step of
 * the example's own, recorded in the same table as `seed-books`, in the
 * transaction that inserts the books.
 *
 * @example
 * app.beforeServe(async (signal) => void (await migrateBooks(db, { logger: app.logger, seed: () => sampleBooks(5_000), signal })));
 */
export async function migrateBooks(db: Database, o: BooksMigrationOptions): Promise<{ applied: string[] }> {
  const started = performance.now();
  const { applied } = await migrate({ dir: migrationsOf(db.kind), database: db.handle(), logger: o.logger, signal: o.signal });
  o.signal?.throwIfAborted();
  if (await seedOnce(db, o.seed)) applied.push(SEED_VERSION);
  const ms = Math.round(performance.now() - started);
  if (applied.length === 0) o.logger.info({ database: db.kind, ms }, 'database schema up to date');
  else o.logger.info({ database: db.kind, applied, ms }, 'database migrated');
  return { applied };
}

/**
 * Inserts the seed books and records `SEED_VERSION`, in one transaction that
 * holds the deployment-wide lock (`Database.exclusive`: an advisory lock on
 * PostgreSQL, the write lock on SQLite): a replica starting at the same moment
 * waits, then finds the step recorded. Resolves whether it seeded. Recorded
 * without a checksum, the row is one `migrate()` leaves alone.
 */
async function seedOnce(db: Database, seed: () => Book[]): Promise<boolean> {
  return db.exclusive(SEED_LOCK_KEY, async (tx) => {
    const done = await tx.query('SELECT 1 AS done FROM schema_migrations WHERE version = $1', [SEED_VERSION]);
    if (done.length > 0) return false;
    await insertBooks(tx, seed());
    await tx.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [SEED_VERSION, new Date().toISOString()]);
    return true;
  });
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
