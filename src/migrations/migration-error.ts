import type { MigrationFile } from './migration-files.ts';

/**
 * A migration file the database refused: its name (and line, when the
 * database says where) and the database's message; the driver's error is the
 * `cause`. The files before it stay applied and recorded, this one left no
 * trace (its transaction was rolled back), and the next run starts again from
 * it. A file that runs outside a transaction (`-- flotilla: no-transaction`)
 * is not rolled back: its statements before the one that failed stay applied,
 * it is not recorded, and the next run runs it again from its first statement;
 * the message says so.
 *
 * @example
 * try {
 *   await migrate({ dir, database });
 * } catch (error) {
 *   if (error instanceof MigrationError) console.error(error.file, error.line, error.cause);
 *   throw error;
 * }
 * // MigrationError: migration 0002-authors.sql failed at line 3: relation "author" does not exist
 */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  /** The file's name, `0002-authors.sql`. */
  readonly file: string;
  /** Its version, as the table would have recorded it: `0002-authors`. */
  readonly version: string;
  /** Its absolute path. */
  readonly path: string;
  /** The line of the file the database points at (PostgreSQL's error position), when it does. */
  readonly line: number | undefined;

  /** `offset`: where in the file the statement the database refused begins (a file run statement by statement). */
  constructor(file: MigrationFile, cause: unknown, offset = 0) {
    const line = lineOf(file.sql, cause, offset);
    const reason = cause instanceof Error ? cause.message : String(cause);
    const kept = file.transaction ? '' : ' (outside a transaction: what ran before it stays, the file is not recorded)';
    super(`migration ${file.name} failed${line === undefined ? '' : ` at line ${line}`}: ${reason}${kept}`, { cause });
    this.file = file.name;
    this.version = file.version;
    this.path = file.path;
    this.line = line;
  }
}

/**
 * The line of `sql` at PostgreSQL's `position` (a 1-based character offset into the statement text,
 * which begins at `offset` of the file), if the error has one.
 */
function lineOf(sql: string, cause: unknown, offset: number): number | undefined {
  const position = Number((cause as { position?: unknown } | null)?.position) + offset;
  if (!Number.isInteger(position) || position < 1 || position > sql.length + 1) return undefined;
  return sql.slice(0, position - 1).split('\n').length;
}
