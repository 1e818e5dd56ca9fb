import type { Logger } from 'pino';
import { Backoff, type BackoffPolicy } from './backoff.ts';
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
}

/**
 * What every failure of a worker goes through, whatever it was (an exit, a
 * failed fork, a stuck event loop): the backoff delay, the crash-loop check,
 * the restart counter and one log line. Only early deaths make a crash loop
 * (see `backoff.ts`).
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

  constructor(policy: BackoffPolicy, logger: Logger, metrics: PrimaryMetrics, onCrashLoop: () => void) {
    this.#backoff = new Backoff(policy);
    this.#logger = logger;
    this.#metrics = metrics;
    this.#onCrashLoop = onCrashLoop;
  }

  /** The restart delay (0 with `now`); undefined when this failure makes a crash loop and the primary gives up. */
  failed(f: SlotFailure): number | undefined {
    const { delayMs, crashLoop } = this.#backoff.fail(Date.now(), f.upForMs);
    if (crashLoop) {
      this.#logger.fatal({ slot: f.slot, reason: f.reason, ...f.fields }, 'workers keep failing early: giving up (crash loop)');
      this.#onCrashLoop();
      return undefined;
    }
    const delay = f.now === true ? 0 : delayMs;
    this.#metrics.restarts.inc({ reason: f.reason });
    this.#logger[f.level]({ slot: f.slot, reason: f.reason, ...f.fields, delayMs: delay }, f.message);
    return delay;
  }
}
