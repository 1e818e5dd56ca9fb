import type { Logger } from 'pino';
import { SHUTDOWN_SIGNALS, trapShutdownSignals } from '../../utils/shutdown-signals.ts';

/** What a signal shuts down: the App's lifecycle, as the signal handlers read it. */
export interface SignalledShutdown {
  /** Starts the graceful shutdown (or joins the one under way); resolves once it is over. */
  close(): Promise<void>;
  /** Whether the shutdown completed in time with no failing hook: the process's exit code is 0, else 1. */
  readonly clean: boolean;
  /** What is left of the shutdown budget (ms, maybe negative): the process exits then at the latest. */
  budgetLeftMs(): number;
}

/**
 * Traps SIGINT and SIGTERM for a standalone App. The first: graceful shutdown, then the process exits
 * by the deadline at the latest (once the event loop is empty, if sooner). A second: exit at once,
 * with `128 + n`. Returns the function that removes the handlers; they stay while closing, so that a
 * second signal still exits at once.
 *
 * @example
 * const untrap = trapAppSignals(logger, { close: () => lifecycle.close(), clean, budgetLeftMs });
 */
export function trapAppSignals(logger: Logger, shutdown: SignalledShutdown): () => void {
  return trapShutdownSignals({
    first: (signal) => {
      logger.info({ signal }, 'signal received: shutting down');
      shutdown.close().then(() => {
        const left = shutdown.budgetLeftMs();
        process.exitCode = shutdown.clean ? 0 : 1;
        setTimeout(() => process.exit(), Math.max(left, 100)).unref();
      });
    },
    again: (signal) => {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(128 + SHUTDOWN_SIGNALS[signal]);
    },
  });
}
