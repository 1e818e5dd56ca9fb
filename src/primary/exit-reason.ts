/** What the supervisor knows of a worker that exited without being asked to. */
export interface UnexpectedExit {
  /** A failure the supervisor recorded first (`startup-timeout`, `uncaught-exception`, `boot-failure`). */
  failure: string | undefined;
  code: number | null;
  signal: string | null;
  /** Whether it had been listening. */
  wasUp: boolean;
}

/** Why a worker that was not asked to may have been killed, in words (the kernel leaves no note). */
const LIKELY_CAUSE: Record<string, string> = {
  SIGKILL: 'not by flotilla: most likely the kernel out-of-memory killer (container memory limit)',
  SIGABRT: 'the process aborted: most likely a JavaScript heap out of memory (--max-old-space-size)',
};

/**
 * The `reason` label of `flotilla_worker_restarts_total` for an unexpected
 * exit, and for a death by a signal nobody in the cluster sent, its likely
 * cause in words (as the log line says it).
 *
 * @example
 * exitReason({ failure: undefined, code: null, signal: 'SIGKILL', wasUp: true });
 * // { reason: 'killed-SIGKILL', likelyCause: 'not by flotilla: most likely the kernel out-of-memory killer …' }
 */
export function exitReason(exit: UnexpectedExit): { reason: string; likelyCause?: string } {
  const { failure, code, signal, wasUp } = exit;
  if (failure !== undefined) return { reason: failure };
  if (signal !== null) {
    const likelyCause = LIKELY_CAUSE[signal];
    return likelyCause === undefined ? { reason: `killed-${signal}` } : { reason: `killed-${signal}`, likelyCause };
  }
  return { reason: !wasUp ? 'boot-failure' : code === 0 ? 'unexpected-exit' : 'crash' };
}
