import pino, { type DestinationStream, type Logger } from 'pino';
import type { ResolvedConfig } from '../config/types.ts';

/** Header values that never reach a log line. */
export const REDACTED_PATHS = [
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.headers.authorization',
  '*.headers.cookie',
];

/** The App's pino logger: JSON lines, ISO time, service name, authorization/cookie redacted. */
export function createLogger(config: ResolvedConfig, stream?: DestinationStream, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level: config.logging.level,
      base: { service: config.serviceName, pid: process.pid, ...bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    stream ?? pino.destination({ dest: 1, sync: false }),
  );
}
