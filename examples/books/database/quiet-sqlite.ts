/** The text of the warning Node 22 emits when `node:sqlite` loads (Node 24 emits none). */
const SQLITE_WARNING = /SQLite is an experimental feature/;

/**
 * Runs `load` (the import of `node:sqlite`) with that one warning dropped:
 * on Node 22 it would print `ExperimentalWarning: SQLite is an experimental
 * feature…` on stderr at every start of every process, for a module the
 * example relies on knowingly. Every other warning passes through; Node 24
 * prints none for `node:sqlite`, so there this changes nothing.
 *
 * @example
 * const { SqliteDatabase } = await withoutSqliteWarning(() => import('./sqlite-database.ts'));
 */
export async function withoutSqliteWarning<T>(load: () => Promise<T>): Promise<T> {
  const emit = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (SQLITE_WARNING.test(typeof warning === 'string' ? warning : warning.message)) return;
    return (emit as (...a: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return await load();
  } finally {
    process.emitWarning = emit;
  }
}
