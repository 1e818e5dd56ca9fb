import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { traceFlush } from '../observability/flush-traces.ts';
import type { InFlight } from '../overload/in-flight.ts';
import type { ConnectionTracker } from '../transport/connections.ts';
import type { Front } from '../transport/front.ts';

/** A connection accepted just before the shutdown gets this long to send its request. */
const FRESH_CONNECTION_GRACE_MS = 1_000;

/** A shutdown hook; its signal aborts when the shutdown budget is spent. */
export type ShutdownHook = (signal: AbortSignal) => void | Promise<void>;

export interface ShutdownPlan {
  readonly logger: Logger;
  readonly front: Front | undefined;
  readonly connections: ConnectionTracker | undefined;
  readonly inFlight: InFlight;
  /** Resolves once no WebSocket is open (they were told to go when draining started). */
  readonly sockets?: () => Promise<void>;
  readonly hooks: readonly ShutdownHook[];
  /** Aborted by this sequence when the budget is spent; shared with requests and hooks. */
  readonly deadline: AbortController;
  readonly budgetMs: number;
  readonly drainDelayMs: number;
  /** Turns `/health` to 503. */
  startDraining(): void;
}

/**
 * The worker-side shutdown sequence (ARCHITECTURE.md, "SIGTERM's path"), one phase after the other:
 * drain (event streams end, WebSockets are closed with 1001) → close the listener and idle keep-alive
 * connections → let in-flight requests and the WebSockets' closing handshakes finish → run the hooks in registration order → flush the registered
 * tracer provider (when it can) → destroy what is left.
 * Everything shares one deadline, `budgetMs` after the start.
 * Resolves with `true` when every phase completed in time and no hook failed.
 */
export async function runShutdown(plan: ShutdownPlan): Promise<boolean> {
  const { logger, front, inFlight, deadline } = plan;
  const started = performance.now();
  const timer = setTimeout(() => deadline.abort(new Error(`shutdown budget of ${plan.budgetMs} ms spent`)), plan.budgetMs);
  const phase = (name: string, extra: object = {}) =>
    logger.info({ phase: name, elapsedMs: Math.round(performance.now() - started), ...extra }, `shutdown: ${name}`);
  const deadlinePassed = aborted(deadline.signal);
  const untilDeadline = <T>(work: Promise<T>) => Promise.race([work, deadlinePassed]);
  let ok = true;

  phase('drain');
  plan.startDraining();
  if (plan.drainDelayMs > 0) await untilDeadline(delay(plan.drainDelayMs));

  phase('close-listener');
  const drained = plan.connections?.drain(FRESH_CONNECTION_GRACE_MS) ?? Promise.resolve();

  phase('finish-in-flight', { inFlight: inFlight.count });
  // a request read during the drain waits in the request queue before it is in flight: the count is read after it
  await untilDeadline(Promise.all([drained.then(() => inFlight.idle()), plan.sockets?.()]));
  front?.close();

  for (const [index, hook] of plan.hooks.entries()) {
    if (deadline.signal.aborted) {
      logger.warn({ hook: index }, 'shutdown hook skipped: the budget is spent');
      ok = false;
      continue;
    }
    phase('hook', { hook: index });
    try {
      await untilDeadline(Promise.resolve().then(() => hook(deadline.signal)));
    } catch (error) {
      ok = false;
      logger.error({ err: error, hook: index }, 'shutdown hook failed');
    }
  }

  // spans an SDK still batches (the last requests' among them) are exported before the process exits
  const flush = deadline.signal.aborted ? undefined : traceFlush();
  if (flush !== undefined) {
    phase('flush-traces');
    try {
      await untilDeadline(flush());
    } catch (error) {
      logger.warn({ err: error }, 'shutdown: flushing the traces failed');
    }
  }

  if (deadline.signal.aborted) ok = false;
  phase('destroy', { inFlight: inFlight.count });
  plan.connections?.destroyAll();
  if (plan.connections === undefined) front?.closeAllConnections();
  clearTimeout(timer);
  phase('done', { ok });
  return ok;
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
