import type { Logger } from 'pino';
import type { WorkerRoutes } from '../ipc/protocol.ts';
import { Backoff, type BackoffPolicy } from './backoff.ts';
import { PoisonRequests, suspectRoutes, UNKNOWN_ROUTE } from './poison-requests.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';

/** One failure of a slot's worker, as the supervisor saw it. */
export interface SlotFailure {
  slot: number;
  /** The `reason` label of `flotilla_worker_restarts_total`. */
  reason: string;
  /** How long the worker had been listening (0 if never; Infinity for a failure that must not count as early). */
  upForMs: number;
  level: 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
  /** The replacement starts at once (a stuck worker), not after the backoff delay. */
  now?: boolean;
  /** The worker had received requests: its death is no boot failure, whatever its age (see `backoff.ts`). */
  receivedRequests?: boolean;
  /** The routes it was serving as last heard, to blame for its death. */
  routes?: WorkerRoutes | undefined;
}

/**
 * What every failure of a worker goes through, whatever it was (an exit, a
 * failed fork, a stuck event loop): the backoff delay, the crash-loop check,
 * the restart counter and one log line. Only boot failures make a crash loop
 * (see `backoff.ts`): a worker that received requests and died is replaced,
 * its line naming the routes it was serving, counted by route; when one route
 * is blamed for `POISON_DEATHS` deaths within the crash-loop window, one
 * error line says it looks like a poison request.
 *
 * @example
 * const delayMs = restarts.failed({ slot: 0, reason: 'crash', upForMs, level: 'warn', message, fields });
 * if (delayMs !== undefined) setTimeout(fork, delayMs);
 */
export class RestartPolicy {
  readonly #backoff: Backoff;
  readonly #logger: Logger;
  readonly #metrics: PrimaryMetrics;
  readonly #onCrashLoop: () => void;
  readonly #poison: PoisonRequests;

  constructor(policy: BackoffPolicy, logger: Logger, metrics: PrimaryMetrics, onCrashLoop: () => void) {
    this.#backoff = new Backoff(policy);
    this.#poison = new PoisonRequests(policy.crashLoopWindowMs);
    this.#logger = logger;
    this.#metrics = metrics;
    this.#onCrashLoop = onCrashLoop;
  }

  /** The restart delay (0 with `now`); undefined when this failure makes a crash loop and the primary gives up. */
  failed(f: SlotFailure): number | undefined {
    const now = Date.now();
    const onRequests = f.receivedRequests === true;
    const { delayMs, crashLoop } = this.#backoff.fail(now, f.upForMs, onRequests);
    if (crashLoop) {
      this.#logger.fatal({ slot: f.slot, reason: f.reason, ...f.fields }, 'workers keep failing early: giving up (crash loop)');
      this.#onCrashLoop();
      return undefined;
    }
    const delay = f.now === true ? 0 : delayMs;
    this.#metrics.restarts.inc({ reason: f.reason });
    const requests = onRequests
      ? { receivedRequests: true, inFlightRoutes: f.routes?.inFlight ?? [], lastRoute: f.routes?.last ?? '' }
      : {};
    this.#logger[f.level]({ slot: f.slot, reason: f.reason, ...f.fields, ...requests, delayMs: delay }, f.message);
    if (onRequests) this.#diedOnRequests(now, f);
    return delay;
  }

  /** Counts the death under the routes blamed; names a route that keeps killing workers, once per window. */
  #diedOnRequests(now: number, f: SlotFailure): void {
    const blamed = suspectRoutes(f.routes);
    for (const route of blamed.length === 0 ? [UNKNOWN_ROUTE] : blamed) this.#metrics.requestDeaths.inc({ route });
    for (const poison of this.#poison.died(now, blamed)) {
      this.#logger.error(
        { slot: f.slot, reason: f.reason, ...poison },
        'workers keep dying on requests to this route: it looks like a poison request (they are replaced, never given up on)',
      );
    }
  }
}
