import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createError } from '../errors/flotilla-error.ts';

/** One SQL file of the migrations folder. */
export interface MigrationFile {
  /** The file's name, `0002-authors.sql`. */
  readonly name: string;
  /** What `schema_migrations` records: the name without `.sql`, `0002-authors`. */
  readonly version: string;
  /** Its absolute path. */
  readonly path: string;
  /** Its text, a byte-order mark left out. */
  readonly sql: string;
  /** sha256 (hex) of its text with `\r\n` read as `\n`: a checkout on Windows is the same file. */
  readonly checksum: string;
  /**
   * `false` when the file says `-- flotilla: no-transaction` among the comments that open it: it
   * runs outside a transaction, for what refuses one (`CREATE INDEX CONCURRENTLY`).
   */
  readonly transaction: boolean;
}

/** `0001-books.sql`, `20240612_add_isbn.sql`: digits, `-` or `_`, a name, `.sql`. */
const NAME = /^(\d+)[-_][^/\\]+\.sql$/;

/** A down migration of another tool (golang-migrate, dbmate): applied forwards it would undo its own up. */
const DOWN = /\.down\.sql$/i;

/** A line `-- flotilla: <directive>` (the only directive: `no-transaction`). */
const DIRECTIVE = /^--\s*flotilla\s*:\s*(.*?)\s*$/i;

/**
 * The `.sql` files of `dir` in the order they apply: by their leading number,
 * then by name (`9-x.sql` before `10-x.sql`; zero-padded names sort the same
 * either way). Other files and sub-folders are left alone; a `.sql` file
 * named otherwise, or a down migration (`*.down.sql`), is an error rather than
 * a guess. A file that opens with the comment `-- flotilla: no-transaction`
 * (among its first comment lines, before any statement) runs outside a
 * transaction; another `-- flotilla:` directive there is an error.
 *
 * @example
 * readMigrations(new URL('./migrations/', import.meta.url)).map((m) => m.version); // ['0001-books', '0002-authors']
 */
export function readMigrations(dir: string | URL): MigrationFile[] {
  const folder = dir instanceof URL ? fileURLToPath(dir) : resolve(dir);
  const fail = (reason: string, cause?: unknown) =>
    createError('FLO_ERR_MIGRATIONS_DIRECTORY', { dir: folder, reason }, cause === undefined ? undefined : { cause });
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    throw fail((error as Error).message, error);
  }
  const found: { number: bigint; file: MigrationFile }[] = [];
  for (const entry of entries) {
    if (!entry.name.toLowerCase().endsWith('.sql') || !isFile(folder, entry)) continue;
    if (DOWN.test(entry.name)) throw fail(`${entry.name} is a down migration; migrate() applies files forwards only`);
    const match = NAME.exec(entry.name);
    if (match === null) throw fail(`${entry.name} is not named like 0001-name.sql (a number, '-' or '_', a name)`);
    const path = join(folder, entry.name);
    const sql = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
    const transaction = transactionOf(sql, (directive) => {
      throw fail(`${entry.name} says '-- flotilla: ${directive}', which is not a directive (the one there is: no-transaction)`);
    });
    found.push({
      number: BigInt(match[1]!),
      file: { name: entry.name, version: entry.name.slice(0, -4), path, sql, checksum: checksumOf(sql), transaction },
    });
  }
  found.sort((a, b) => (a.number === b.number ? compare(a.file.name, b.file.name) : a.number < b.number ? -1 : 1));
  return found.map((f) => f.file);
}

/**
 * The checksum `schema_migrations` records for a file's text: sha256, hex, of
 * the text with its line endings read as `\n`.
 *
 * @example
 * checksumOf('CREATE TABLE t (x int);\r\n') === checksumOf('CREATE TABLE t (x int);\n'); // true
 */
export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');
}

/** Whether a file runs in a transaction: yes, unless a comment line that opens it says `-- flotilla: no-transaction`. */
function transactionOf(sql: string, unknown: (directive: string) => never): boolean {
  let transaction = true;
  for (const line of sql.split('\n')) {
    const text = line.trim();
    if (text === '') continue;
    if (!text.startsWith('--')) break;
    const directive = DIRECTIVE.exec(text)?.[1];
    if (directive === undefined) continue;
    if (directive.toLowerCase() !== 'no-transaction') unknown(directive);
    transaction = false;
  }
  return transaction;
}

/** A file, or a symbolic link to one. */
function isFile(folder: string, entry: Dirent): boolean {
  if (entry.isFile()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(join(folder, entry.name)).isFile();
  } catch {
    return false;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
