/** One statement of a migration file, and where it starts in the file's text. */
export interface SqlStatement {
  readonly text: string;
  /** The index of its first character in the file's text. */
  readonly offset: number;
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
/** `$$` or `$tag$`; a tag does not start with a digit (`$1` is a parameter). */
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/**
 * The statements of a PostgreSQL migration file that runs outside a transaction (`-- flotilla:
 * no-transaction`), each sent alone: a string of several statements is one implicit transaction
 * on the server, which `CREATE INDEX CONCURRENTLY` refuses. The file is cut at each `;` outside a
 * string (`'…'`, `E'…'` with its backslash escapes), a quoted identifier, a dollar-quoted body
 * (`$$…$$`, `$fn$…$fn$`) and a comment (`--`, `/* … *\/`, nested); pieces holding only blanks and
 * comments are left out. Not the server's grammar: a `BEGIN ATOMIC … END` function body, whose
 * statements end in `;` too, belongs in a file that runs in a transaction.
 *
 * @example
 * splitStatements('CREATE INDEX CONCURRENTLY a ON t (x);\nSELECT 1;').map((s) => s.text);
 * // ['CREATE INDEX CONCURRENTLY a ON t (x)', 'SELECT 1']
 */
export function splitStatements(sql: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let content = -1; // the first character of the current statement that is neither blank nor comment
  let i = 0;
  const end = () => {
    if (content !== -1) statements.push({ text: sql.slice(content, i).trimEnd(), offset: content });
    content = -1;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline + 1;
      continue;
    }
    if (c === '/' && next === '*') {
      i = blockCommentEnd(sql, i);
      continue;
    }
    if (c === ';') {
      end();
      i++;
      continue;
    }
    if (content === -1 && !/\s/.test(c)) content = i;
    if (c === "'") {
      const escapes = (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !IDENTIFIER_CHAR.test(sql[i - 2] ?? ' ');
      i = quotedEnd(sql, i, "'", escapes);
    } else if (c === '"') {
      i = quotedEnd(sql, i, '"', false);
    } else if (c === '$' && !IDENTIFIER_CHAR.test(sql[i - 1] ?? ' ')) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql)?.[0];
      if (tag === undefined) {
        i++;
      } else {
        const close = sql.indexOf(tag, i + tag.length);
        i = close === -1 ? sql.length : close + tag.length;
      }
    } else {
      i++;
    }
  }
  end();
  return statements;
}

/** The index after a `/* … *\/` comment opening at `i`; they nest in PostgreSQL. */
function blockCommentEnd(sql: string, i: number): number {
  let depth = 0;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return i;
}

/** The index after the quoted text opening at `i` (a doubled quote stays inside; with `escapes`, a backslash escapes). */
function quotedEnd(sql: string, i: number, quote: string, escapes: boolean): number {
  i++;
  while (i < sql.length) {
    const c = sql[i];
    if (escapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i += 2;
    } else {
      i++;
    }
  }
  return i;
}
