import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/types.ts';
import { registerProcessMetrics } from '../../metrics/process-metrics.ts';
import { type Counter, Registry } from '../../metrics/prom-client.ts';
import { PromMetricsCollector } from '../../metrics/prom-collector.ts';
import { WireMetrics } from '../../metrics/protocol-metrics.ts';
import { shedCounter } from '../../metrics/shed-metrics.ts';
import type { Admission } from '../overload/admission.ts';
import { appAdmission } from '../overload/app-admission.ts';

/** An App's own metrics: its registry and what its requests record there. */
export interface AppMetrics {
  readonly registry: Registry;
  /** The request metrics (`metrics.enabled`): the first collector, until `app.setMetricsCollector`. */
  readonly collector: PromMetricsCollector | undefined;
  /** `flotilla_requests_shed_total{reason}` (`metrics.enabled`). */
  readonly shed: Counter<'reason'> | undefined;
  /** The admission control (`overload.enabled`), its state shown as `flotilla_admission_state`. */
  readonly admission: Admission | undefined;
  /** Requests and connections by protocol: only where there is more than plain HTTP/1.1 to tell apart (`tls`, `http2`). */
  readonly wire: WireMetrics | undefined;
}

/**
 * An App's registry and request metrics, registered in the order of the exposition: the process
 * metrics (`process_*`, `nodejs_*`) when `processMetrics`, then the request metrics, the shed
 * counter, the admission control's state, and the requests by protocol.
 *
 * @example
 * const { registry, collector, shed, admission, wire } = installMetrics(config, logger, { processMetrics: true });
 */
export function installMetrics(config: ResolvedConfig, logger: Logger, options: { processMetrics: boolean }): AppMetrics {
  const registry = new Registry();
  if (options.processMetrics) registerProcessMetrics(registry);
  const { enabled } = config.metrics;
  // the request metrics first: the registry's exposition keeps registration order
  const collector = enabled ? new PromMetricsCollector(registry) : undefined;
  const shed = enabled ? shedCounter(registry, ['overload', 'client-gone', 'handler-timeout']) : undefined;
  const admission = config.overload.enabled ? appAdmission(config, logger, registry) : undefined;
  const wire =
    config.tls !== undefined || config.http2 ? new WireMetrics(enabled ? registry : undefined, config.tls !== undefined) : undefined;
  return { registry, collector, shed, admission, wire };
}
