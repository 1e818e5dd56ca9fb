import pino, { type Logger } from 'pino';

/**
 * A pino logger configured like flotilla's own (`src/app/observability/logger.ts`): JSON
 * lines to stdout through an asynchronous destination, ISO time, level labels,
 * service and pid on every line, authorization/cookie headers redacted.
 */
export function benchLogger(service: string): Logger {
  return pino(
    {
      level: 'info',
      base: { service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'headers.authorization',
          'headers.cookie',
          'headers["set-cookie"]',
          'req.headers.authorization',
          'req.headers.cookie',
          'res.headers["set-cookie"]',
          '*.headers.authorization',
          '*.headers.cookie',
        ],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ dest: 1, sync: false }),
  );
}
