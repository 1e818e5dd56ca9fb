import { KError } from 'flotilla';

/** What a driver's error means for the client. */
export type DatabaseFailure = 'unique-violation' | 'unavailable' | 'timeout';

/** Socket errors of a connection that failed or broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 57P01–57P03 (admin
 * shutdown, crash shutdown, cannot connect now), 53300 (too many connections), 40001/40P01 are not
 * here: a serialization failure is the request's to retry, not the database's absence.
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres's own messages for a connection it lost or could not get from its pool in time. */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
];

/** SQLite result codes (primary code: the low byte of `errcode`): BUSY, LOCKED, IOERR, CANTOPEN, FULL. */
const SQLITE_UNAVAILABLE = new Set([5, 6, 10, 13, 14]);
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

/**
 * Classifies an error thrown by `pg` or `node:sqlite`: a unique violation, a
 * database that cannot be reached or serve, a statement past its timeout, or
 * `undefined` for anything else (a bug: the default 500, whose text the
 * production problem never shows).
 *
 * @example
 * failureOf(Object.assign(new Error('duplicate key'), { code: '23505' })); // 'unique-violation'
 */
export function failureOf(error: unknown): DatabaseFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  if (typeof errcode === 'number') {
    if (errcode === SQLITE_CONSTRAINT_UNIQUE || errcode === SQLITE_CONSTRAINT_PRIMARYKEY) return 'unique-violation';
    if (SQLITE_UNAVAILABLE.has(errcode & 0xff)) return 'unavailable';
    return undefined;
  }
  if (code === '23505') return 'unique-violation';
  if (code === '57014') return 'timeout'; // query_canceled: statement_timeout (a client's cancel is not answered)
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))) return 'unavailable';
  if (PG_CONNECTION_MESSAGES.some((m) => m.test(error.message))) return 'unavailable';
  if (error instanceof AggregateError) return error.errors.some((e) => failureOf(e) === 'unavailable') ? 'unavailable' : undefined;
  return undefined;
}

/** Seconds a client is told to wait before trying again while the database is away. */
const RETRY_AFTER_S = '5';

/**
 * The problem a database failure becomes (the App's error handler, see
 * `service.ts`): 503 with `Retry-After` while the database is away or too
 * slow, 409 for a unique violation; the driver's text stays in the log
 * (`cause`), never in the response.
 *
 * @example
 * app.setErrorHandler((error) => databaseProblem(error));
 */
export function databaseProblem(error: unknown): KError | undefined {
  switch (failureOf(error)) {
    case 'unavailable':
      return KError.unavailable('the database is unavailable; try again shortly', {
        cause: error,
        headers: { 'Retry-After': RETRY_AFTER_S },
      });
    case 'timeout':
      return KError.unavailable('the database did not answer in time', { cause: error, headers: { 'Retry-After': RETRY_AFTER_S } });
    case 'unique-violation':
      return KError.conflict('the resource already exists', { cause: error });
    default:
      return undefined;
  }
}
