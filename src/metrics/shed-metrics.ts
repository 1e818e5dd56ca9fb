import type { Counter, Registry } from 'prom-client';
import { registeredCounter } from './registered-metric.ts';

/**
 * Why a request was turned away without its route's work being done: the `reason` label of
 * `flotilla_requests_shed_total`. `overload`: the worker's admission control shed it (its event loop
 * stayed late); `client-gone`: its client had left before the handler started; `handler-timeout`: its
 * handler ran past `timeouts.handlerMs` and was answered 503; `queue`: the primary's queue deadline.
 *
 * @example
 * const reason: ShedReason = 'client-gone';
 */
export type ShedReason = 'overload' | 'client-gone' | 'handler-timeout' | 'queue';

/**
 * Registers (or reuses) `flotilla_requests_shed_total{reason}` on a registry and starts the given
 * reasons at 0, so that their rates are defined from the start. Workers pass their three reasons,
 * the primary its own: the primary's sum of the workers' counters and its own is one family.
 *
 * @example
 * const shed = shedCounter(registry, ['overload', 'client-gone', 'handler-timeout']);
 * shed.inc({ reason: 'overload' });
 */
export function shedCounter(registry: Registry, reasons: readonly ShedReason[] = []): Counter<'reason'> {
  const counter = registeredCounter(registry, {
    name: 'flotilla_requests_shed_total',
    help: 'Requests answered without running their route (overload: 503 by admission control; client-gone: not run, the client had left; handler-timeout: 503 after timeouts.handlerMs; queue: 503 by the primary).',
    labelNames: ['reason'],
  });
  for (const reason of reasons) counter.inc({ reason }, 0);
  return counter;
}
