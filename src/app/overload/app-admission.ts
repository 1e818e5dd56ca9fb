import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResolvedConfig } from '../../config/types.ts';
import { admissionGauge } from '../../metrics/admission-metrics.ts';
import { Admission } from './admission.ts';

/**
 * An App's admission control from its `overload` section: a change of state is logged (a warning
 * when shedding starts) and shown by `flotilla_admission_state` when metrics are enabled.
 *
 * @example
 * const admission = config.overload.enabled ? appAdmission(config, logger, registry) : undefined;
 */
export function appAdmission(config: ResolvedConfig, logger: Logger, registry: Registry): Admission {
  const { delayTargetMs: targetMs, delayIntervalMs: intervalMs, shedAfterMs } = config.overload;
  const gauge = config.metrics.enabled ? admissionGauge(registry) : undefined;
  const onChange = (shedding: boolean, delayMs: number) => {
    gauge?.set(shedding ? 1 : 0);
    const fields = { delayMs: Math.round(delayMs * 10) / 10, targetMs, intervalMs, shedAfterMs };
    if (shedding) logger.warn(fields, 'overloaded: shedding new requests (503 OVERLOADED)');
    else logger.info(fields, 'load back under target: admitting every request');
  };
  return new Admission({ targetMs, intervalMs, shedAfterMs, onChange });
}
