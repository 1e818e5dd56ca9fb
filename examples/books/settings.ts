import type { JsonSchema } from 'flotilla';

/**
 * The catalogue's own settings (the config's top-level `settings`). Without
 * `databaseUrl` (absent or empty) the books live in an embedded SQLite file,
 * so `npm start` needs no server; with it, in PostgreSQL.
 */
export const BOOKS_SETTINGS = {
  type: 'object',
  additionalProperties: false,
  properties: {
    databaseUrl: {
      type: 'string',
      writeOnly: true,
      description: 'A `postgres://` URL: the books live in PostgreSQL. Absent or empty: in the embedded SQLite database.',
    },
    databaseFile: {
      type: 'string',
      minLength: 1,
      default: 'data/books.sqlite',
      description: 'The SQLite file (relative to the working directory), or `:memory:` (one database per process).',
    },
    poolSize: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 5,
      description: 'PostgreSQL connections per worker: keep workers × poolSize (× replicas) under max_connections.',
    },
    statementTimeoutMs: {
      type: 'integer',
      minimum: 0,
      maximum: 600_000,
      default: 5_000,
      description: 'PostgreSQL cancels a statement running longer (0: no limit); SQLite waits this long for a lock.',
    },
    seedBooks: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000,
      default: 5_000,
      description: 'Books inserted by the first start (recorded with the migrations: never again).',
    },
  },
} as const satisfies JsonSchema;

/** The settings as the setup reads them, defaults applied. */
export interface BooksSettings {
  readonly databaseUrl?: string;
  readonly databaseFile: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
  readonly seedBooks: number;
}
