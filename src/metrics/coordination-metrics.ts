import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registeredCounter, registeredGauge, registeredHistogram } from './registered-metric.ts';

/**
 * What a claim of a cron fire came to: the `result` label of `flotilla_coordination_claims_total`.
 * `won`: this replica runs the fire; `taken`: another replica claimed it first; `clock-skew` and
 * `error`: the fire is skipped here (see `SkipReason`).
 *
 * @example
 * const result: ClaimResult = 'taken';
 */
export type ClaimResult = 'won' | 'taken' | 'clock-skew' | 'error';

/** The metrics of the coordination of schedulers across replicas (`coordination.url`); see {@link coordinationMetrics}. */
export interface CoordinationMetrics {
  /** `flotilla_coordination_connected{backend}`: 1 while the coordinator answers, 0 otherwise. */
  readonly connected: Gauge<'backend'>;
  /** `flotilla_coordination_lease_held{backend}`: 1 while this replica holds the lease (its lease-based schedulers run). */
  readonly leaseHeld: Gauge<'backend'>;
  /** `flotilla_coordination_claims_total{job,result}` */
  readonly claims: Counter<'job' | 'result'>;
  /** `flotilla_coordination_claim_duration_seconds{backend}`: what coordination adds to each fire. */
  readonly claimDuration: Histogram<'backend'>;
}

/** Buckets of the claim duration, in seconds: a round trip to the coordinator, from sub-millisecond to the timeout. */
export const CLAIM_DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * Registers (or reuses) the coordination metrics on a registry, the gauges at 0 for `backend`.
 *
 * @example
 * const m = coordinationMetrics(registry, 'redis');
 * m.connected.set({ backend: 'redis' }, 1);
 */
export function coordinationMetrics(registry: Registry, backend: string): CoordinationMetrics {
  const connected = registeredGauge(registry, {
    name: 'flotilla_coordination_connected',
    help: 'Whether the coordinator of schedulers across replicas (coordination.url) answers: 1 or 0.',
    labelNames: ['backend'],
  });
  const leaseHeld = registeredGauge(registry, {
    name: 'flotilla_coordination_lease_held',
    help: "Whether this replica holds the service's lease, so that its lease-based schedulers run: 1 or 0.",
    labelNames: ['backend'],
  });
  const claims = registeredCounter(registry, {
    name: 'flotilla_coordination_claims_total',
    help: 'Claims of cron fires, by job and result (won: run here; taken: run by another replica; clock-skew, error: skipped).',
    labelNames: ['job', 'result'],
  });
  const claimDuration = registeredHistogram(registry, {
    name: 'flotilla_coordination_claim_duration_seconds',
    help: 'Time to claim a cron fire from the coordinator, in seconds: the latency coordination adds to each fire.',
    labelNames: ['backend'],
    buckets: [...CLAIM_DURATION_BUCKETS],
  });
  connected.set({ backend }, 0);
  leaseHeld.set({ backend }, 0);
  return { connected, leaseHeld, claims, claimDuration };
}
