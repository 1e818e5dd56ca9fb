import { createRequire } from 'node:module';
import type { DestinationStream } from 'pino';
import { createError } from '../../errors/flotilla-error.ts';

/** pino-pretty's factory, as much of it as is used here. */
type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

/**
 * `logging.pretty`: pino-pretty writing human-readable, colored lines to
 * stdout, synchronously (the lines of a process that exits are never lost).
 * For development only (`flotilla dev`); pino-pretty is an optional peer
 * dependency, and its absence is a clear error. `resolveFrom`: where it is
 * looked up (flotilla's own location).
 *
 * @example
 * const logger = pino(options, prettyStream());
 */
/** Whether `prettyStream` can find pino-pretty (looked up from `resolveFrom`). */
export function prettyAvailable(resolveFrom: string | URL = import.meta.url): boolean {
  try {
    createRequire(resolveFrom).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

export function prettyStream(resolveFrom: string | URL = import.meta.url): DestinationStream {
  let factory: PrettyFactory;
  try {
    // pino-pretty is CommonJS: required synchronously, since a logger is made synchronously
    factory = createRequire(resolveFrom)('pino-pretty') as PrettyFactory;
  } catch (error) {
    throw createError('FLO_ERR_PRETTY_MISSING', {}, { cause: error });
  }
  return factory({
    sync: true,
    destination: 1,
    colorize: process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
}
