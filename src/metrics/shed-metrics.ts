import { Counter, type Registry } from 'prom-client';

/** Why a request was turned away or its work stopped short. */
export type ShedReason = 'queue' | 'overload' | 'client-gone' | 'handler-timeout';

/**
 * `flotilla_requests_shed_total{reason}` on `registry`: registered by every
 * worker (`overload`, `client-gone`, `handler-timeout`) and by the primary
 * (`queue`, `client-gone` while queued), summed by the primary like the rest.
 *
 * @example
 * const shed = shedCounter(registry); shed.inc({ reason: 'overload' });
 */
export function shedCounter(registry: Registry): Counter<'reason'> {
  return new Counter({
    name: 'flotilla_requests_shed_total',
    help: 'Requests turned away or cut short, by reason: queue (the primary answered 503: no worker could take the connection in time), overload (a worker answered 503 before any work), client-gone (the client left before its handler ran), handler-timeout (503 after timeouts.handlerMs).',
    labelNames: ['reason'],
    registers: [registry],
  });
}
