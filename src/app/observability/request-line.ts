import pino, { type Logger } from 'pino';

/** The fields of a request's log line, in the order they are written. */
export interface RequestLine {
  requestId: string;
  /** Left out of the line when undefined. */
  traceId: string | undefined;
  method: string;
  route: string;
  path: string;
  /** The client's address (`ctx.ip`: behind a trusted proxy, the one it forwarded). */
  ip: string;
  status: number;
  durationMs: number;
  /** Streamed responses only; left out of the line when undefined. */
  bytes: number | undefined;
  /** `h1` or `h2`, with `tls`: only on an App with `tls` or `http2` (left out of the line when undefined). */
  protocol?: 'h1' | 'h2' | undefined;
  tls?: boolean | undefined;
}

/**
 * pino's internal symbols, which the direct line reads: not its public API, so package.json pins pino's
 * minor (`~10.4.0`), the one test/app/observability/request-line.test.ts compares the lines with. When
 * one of them is missing (another pino than flotilla's), every line goes through `logger.info`.
 */
const SYMBOLS = pino.symbols as unknown as Partial<Record<string, symbol>>;
const { chindingsSym, lsCacheSym, timeSym, streamSym, endSym, mixinSym, hooksSym, formattersSym, serializersSym, asJsonSym } =
  SYMBOLS as unknown as Record<
    | 'chindingsSym'
    | 'lsCacheSym'
    | 'timeSym'
    | 'streamSym'
    | 'endSym'
    | 'mixinSym'
    | 'hooksSym'
    | 'formattersSym'
    | 'serializersSym'
    | 'asJsonSym',
    symbol
  >;
const USED = [chindingsSym, lsCacheSym, timeSym, streamSym, endSym, mixinSym, hooksSym, formattersSym, serializersSym, asJsonSym];
/** Whether this pino has every symbol the direct line reads. */
export const directLines = USED.every((symbol) => typeof symbol === 'symbol');
const NEEDS_METADATA = Symbol.for('pino.metadata');
const INFO = 30;

type PinoInternals = Record<symbol, unknown> & { levelVal: number };

/** What of a logger shapes a line: as `createLogger` made it, to tell whether anything changed it since. */
interface Shape {
  formatters: unknown;
  log: unknown;
  hooks: unknown;
  serializers: unknown;
  asJson: unknown;
}

const shapeOf = (p: PinoInternals): Shape => {
  const formatters = p[formattersSym] as { log?: unknown };
  return { formatters, log: formatters.log, hooks: p[hooksSym], serializers: p[serializersSym], asJson: p[asJsonSym] };
};

/** Loggers made by `createLogger` (logger.ts), with their shape then: the only ones whose lines `writeRequestLine` may write itself. */
const OWN_LOGGERS = new WeakMap<Logger, Shape>();

/** Marks a logger `createLogger` just made: its request lines may be written by `writeRequestLine`. */
export function ownLogger(logger: Logger): void {
  if (directLines) OWN_LOGGERS.set(logger, shapeOf(logger as unknown as PinoInternals));
}

/**
 * Whether the logger still builds lines as `createLogger` made it: no mixin
 * (tracing integrations set one on the logger afterwards to add trace ids),
 * no hook, and the same formatters, serializers and line builder.
 */
function unchanged(p: PinoInternals, shape: Shape): boolean {
  const hooks = p[hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const formatters = p[formattersSym] as { log?: unknown };
  return (
    p[mixinSym] === undefined &&
    hooks === shape.hooks &&
    hooks?.logMethod === undefined &&
    hooks?.streamWrite === undefined &&
    formatters === shape.formatters &&
    formatters.log === shape.log &&
    p[serializersSym] === shape.serializers &&
    p[asJsonSym] === shape.asJson
  );
}

/** Strings as pino writes them (so that the bytes are the same): up to Node 24, short ones escaped by hand, lone surrogates as they are. */
const asString =
  Number(process.versions.node.split('.')[0]) >= 25
    ? (str: string) => JSON.stringify(str)
    : (str: string): string => {
        if (str.length > 100) return JSON.stringify(str);
        let result = '';
        let last = 0;
        for (let i = 0; i < str.length; i++) {
          const point = str.charCodeAt(i);
          if (point < 32) return JSON.stringify(str);
          if (point === 34 || point === 92) {
            result += `${str.slice(last, i)}\\`;
            last = i;
          }
        }
        return `"${result}${str.slice(last)}"`;
      };

/**
 * Writes `request completed` at info level, as `logger.info(line, 'request completed')`
 * would, byte for byte, without pino's generic line builder: on the request path
 * that builder (keys walked, each value's type looked up, the log formatter
 * called) cost more than the line's own text. Only for the App's own logger
 * (`createLogger`: no serializer, mixin, hook or formatter that would change
 * these fields), as long as nothing added one since, writing to a stream that
 * takes plain lines; any other logger, the service's own (`AppOptions.logger`)
 * first, goes through pino's public `logger.info`. test/app/observability/request-line.test.ts
 * compares both on random lines. On flotilla's own logger the direct line costs
 * about half of what `logger.info` does (a few microseconds a request, against
 * some 40 of CPU for the whole request): why pino's minor is pinned.
 *
 * @example
 * writeRequestLine(app.logger, { requestId, traceId: undefined, method: 'GET', route: '/items', path: '/items', ip: '127.0.0.1', status: 200, durationMs: 1.2, bytes: undefined });
 */
export function writeRequestLine(logger: Logger, line: RequestLine): void {
  const p = logger as unknown as PinoInternals;
  const stream = p[streamSym] as { write(s: string): unknown; [NEEDS_METADATA]?: boolean };
  const shape = OWN_LOGGERS.get(logger);
  if (shape === undefined || stream[NEEDS_METADATA] === true || !unchanged(p, shape)) {
    logger.info(line, 'request completed');
    return;
  }
  if (p.levelVal > INFO) return;
  let s = `${(p[lsCacheSym] as Record<number, string>)[INFO]}${(p[timeSym] as () => string)()}${p[chindingsSym] as string},"requestId":${asString(line.requestId)}`;
  if (line.traceId !== undefined) s += `,"traceId":${asString(line.traceId)}`;
  s += `,"method":${asString(line.method)},"route":${asString(line.route)},"path":${asString(line.path)},"ip":${asString(line.ip)},"status":${line.status},"durationMs":${line.durationMs}`;
  if (line.bytes !== undefined) s += `,"bytes":${line.bytes}`;
  if (line.protocol !== undefined) s += `,"protocol":"${line.protocol}"`;
  if (line.tls !== undefined) s += `,"tls":${line.tls}`;
  stream.write(`${s},"msg":"request completed"${p[endSym] as string}`);
}
