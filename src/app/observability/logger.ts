import pino, { type DestinationStream, type Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import { createError, describeValue } from '../../errors/flotilla-error.ts';
import { LineWriter } from './line-writer.ts';
import { prettyStream } from './pretty-stream.ts';
import { ownLogger } from './request-line.ts';

/** Header names whose values never reach a log line. */
export const REDACTED_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
const CENSOR = '[redacted]';

/**
 * The App's pino logger, or with `given` (`new App(config, { logger })`,
 * `defineService({ logger })`) that one, see {@link adoptLogger}: JSON lines, ISO time, service name, and the
 * credentials of any `headers` object (at the top level of a line, or one level
 * down such as `req.headers`) replaced by `[redacted]`. This check costs a
 * glance at the line's top-level keys, unlike pino's path-based `redact`,
 * which showed in the request path's profile.
 *
 * Lines go to stdout through a `LineWriter`: in batches of whole lines, each
 * write at most 4 KiB on a pipe so that the workers sharing it never split
 * each other's lines, written at most 100 ms after the first one and flushed
 * synchronously when the process exits. One write per line showed in a busy
 * worker's profile as much as the request's own response. With
 * `logging.pretty`, lines are human-readable instead (`pretty-stream.ts`).
 */
export function createLogger(
  config: ResolvedConfig,
  stream?: DestinationStream,
  bindings: Record<string, unknown> = {},
  given?: Logger,
): Logger {
  if (given !== undefined) return adoptLogger(given, bindings);
  const logger = pino(
    {
      level: config.logging.level,
      base: { service: config.serviceName, pid: process.pid, ...bindings },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }), log: redactCredentials },
    },
    stream ?? (config.logging.pretty ? prettyStream() : new LineWriter(1)),
  );
  ownLogger(logger);
  return logger;
}

/**
 * The service's own pino logger as the App's: flotilla's bindings (the worker's
 * slot, the service thread's role) added with `logger.child(…)`, nothing else
 * changed. Its level, redaction, serializers, mixin and destination are the
 * service's: `logging.level` and `logging.pretty` do not apply, and its lines
 * go through pino's own line builder (request-line.ts writes none itself).
 * Anything that is not a pino logger is refused with `FLO_ERR_BAD_LOGGER`.
 *
 * @example
 * const logger = adoptLogger(pino({ redact: ['req.headers.authorization'] }), { worker: 0 });
 */
export function adoptLogger(given: Logger, bindings: Record<string, unknown> = {}): Logger {
  if (!isLogger(given)) throw createError('FLO_ERR_BAD_LOGGER', { got: describeValue(given) });
  return Object.keys(bindings).length === 0 ? given : given.child(bindings);
}

/** Whether `value` has what flotilla calls on a pino logger. */
function isLogger(value: unknown): value is Logger {
  if (typeof value !== 'object' || value === null) return false;
  const logger = value as Record<string, unknown>;
  return (
    ['child', 'trace', 'debug', 'info', 'warn', 'error', 'fatal', 'isLevelEnabled'].every((name) => typeof logger[name] === 'function') &&
    typeof logger['level'] === 'string'
  );
}

let lastMs = 0;
let lastTime = '';

/**
 * pino's `isoTime`, formatted once per millisecond: a busy worker writes many
 * lines within the same millisecond, and `toISOString` showed in its profile.
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/** Returns the line with credential headers redacted; the caller's objects are never modified. */
export function redactCredentials(line: Record<string, unknown>): Record<string, unknown> {
  let out = line;
  for (const key in line) {
    const value = line[key];
    if (typeof value !== 'object' || value === null) continue;
    const redacted = key === 'headers' ? redactHeaders(value) : nestedHeaders(value);
    if (redacted !== value) {
      if (out === line) out = { ...line };
      out[key] = redacted;
    }
  }
  return out;
}

function nestedHeaders(value: object): object {
  const headers = (value as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null || Array.isArray(value)) return value;
  const redacted = redactHeaders(headers);
  return redacted === headers ? value : { ...value, headers: redacted };
}

function redactHeaders(headers: object): object {
  let out: Record<string, unknown> | undefined;
  for (const name of Object.keys(headers)) {
    if (!REDACTED_HEADERS.has(name.toLowerCase())) continue;
    out ??= { ...headers };
    out[name] = CENSOR;
  }
  return out ?? headers;
}
