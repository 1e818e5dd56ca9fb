import pino, { type Logger } from 'pino';

/** The fields of a request's log line, in the order they are written. */
export interface RequestLine {
  requestId: string;
  /** Left out of the line when undefined. */
  traceId: string | undefined;
  method: string;
  route: string;
  path: string;
  status: number;
  durationMs: number;
  /** Streamed responses only; left out of the line when undefined. */
  bytes: number | undefined;
}

const { chindingsSym, lsCacheSym, timeSym, streamSym, endSym } = pino.symbols as unknown as Record<
  'chindingsSym' | 'lsCacheSym' | 'timeSym' | 'streamSym' | 'endSym',
  symbol
>;
const NEEDS_METADATA = Symbol.for('pino.metadata');
const INFO = 30;

/** Loggers made by `createLogger` (logger.ts): the only ones whose lines `writeRequestLine` may write itself. */
export const OWN_LOGGERS = new WeakSet<Logger>();

type PinoInternals = Record<symbol, unknown> & { levelVal: number };

/**
 * Writes `request completed` at info level, as `logger.info(line, 'request completed')`
 * would, byte for byte, without pino's generic line builder: on the request path
 * that builder (keys walked, each value's type looked up, the log formatter
 * called) cost more than the line's own text. Only for the App's own logger
 * (`createLogger`: no serializer, mixin, hook or formatter that would change
 * these fields) writing to a stream that takes plain lines; any other logger
 * goes through pino. test/app/request-line.test.ts compares both on random lines.
 *
 * @example
 * writeRequestLine(app.logger, { requestId, traceId: undefined, method: 'GET', route: '/items', path: '/items', status: 200, durationMs: 1.2, bytes: undefined });
 */
export function writeRequestLine(logger: Logger, line: RequestLine): void {
  const p = logger as unknown as PinoInternals;
  const stream = p[streamSym] as { write(s: string): unknown; [NEEDS_METADATA]?: boolean };
  if (!OWN_LOGGERS.has(logger) || stream[NEEDS_METADATA] === true) {
    logger.info(line, 'request completed');
    return;
  }
  if (p.levelVal > INFO) return;
  let s = `${(p[lsCacheSym] as Record<number, string>)[INFO]}${(p[timeSym] as () => string)()}${p[chindingsSym] as string},"requestId":${JSON.stringify(line.requestId)}`;
  if (line.traceId !== undefined) s += `,"traceId":${JSON.stringify(line.traceId)}`;
  s += `,"method":${JSON.stringify(line.method)},"route":${JSON.stringify(line.route)},"path":${JSON.stringify(line.path)},"status":${line.status},"durationMs":${line.durationMs}`;
  if (line.bytes !== undefined) s += `,"bytes":${line.bytes}`;
  stream.write(`${s},"msg":"request completed"${p[endSym] as string}`);
}
