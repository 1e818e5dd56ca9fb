/** The signals that start a graceful shutdown, with their numbers (for the `128 + n` exit code). */
export const SHUTDOWN_SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
export type ShutdownSignal = keyof typeof SHUTDOWN_SIGNALS;

/**
 * Traps SIGINT and SIGTERM: the first calls `first`, any later one calls
 * `again` (which should end the process at once). Returns the function that
 * removes the handlers. Shared by a standalone App and the cluster's primary,
 * so both read "a second signal exits at once" the same way.
 *
 * @example
 * const untrap = trapShutdownSignals({ first: (s) => void close(s), again: (s) => process.exit(128 + SHUTDOWN_SIGNALS[s]) });
 */
export function trapShutdownSignals(handlers: { first(signal: ShutdownSignal): void; again(signal: ShutdownSignal): void }): () => void {
  let received = false;
  const offs = (Object.keys(SHUTDOWN_SIGNALS) as ShutdownSignal[]).map((signal) => {
    const handler = () => {
      if (received) handlers.again(signal);
      else {
        received = true;
        handlers.first(signal);
      }
    };
    process.on(signal, handler);
    return () => process.off(signal, handler);
  });
  return () => {
    for (const off of offs) off();
  };
}
