import { ConfigError, type JsonSchema } from 'flotilla';

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
    apiKey: {
      type: 'string',
      minLength: 1,
      secret: true,
      description:
        'The key `POST /api/books` requires (`X-Api-Key`). config/app.yaml reads it from BOOKS_API_KEY; its fallback, for development, is refused in production. Absent: `dev-key` outside production.',
    },
    readerPassword: {
      type: 'string',
      minLength: 1,
      secret: true,
      description:
        "The password of the front page's `reader` account. config/app.yaml reads it from BOOKS_READER_PASSWORD; its fallback, for development, is refused in production. Absent: `reader` outside production.",
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
  readonly apiKey?: string;
  readonly readerPassword?: string;
}

/** The development credentials, taken when the settings give none outside production. */
export const DEVELOPMENT_CREDENTIALS = { apiKey: 'dev-key', readerPassword: 'reader' } as const;

/**
 * A credential of the settings, or its development value: in production it must be given (from
 * its environment variable: config/app.yaml), else the start stops with `file:line` (exit 2).
 *
 * @example
 * credential(app.config.env, settings, 'apiKey'); // 'dev-key' in development without BOOKS_API_KEY
 */
export function credential(env: string, settings: BooksSettings, key: keyof typeof DEVELOPMENT_CREDENTIALS): string {
  const given = settings[key];
  if (given !== undefined) return given;
  if (env !== 'production') return DEVELOPMENT_CREDENTIALS[key];
  throw new ConfigError([
    { key: `settings.${key}`, path: ['settings', key], message: 'is required in production (the development one is refused)' },
  ]);
}
