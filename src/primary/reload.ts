import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { ConfigError, formatProblem } from '../config/config-error.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { rollingRestart } from './rolling-restart.ts';
import type { Supervisor } from './supervisor.ts';
import { countWithin, workerRange } from './worker-range.ts';

/**
 * The keys a reload cannot change while the cluster runs: the listening
 * addresses, the metrics endpoint, and the supervision the primary set up at
 * start. A reload that changes one is refused as a whole.
 */
export const FIXED_KEYS = [
  'port',
  'host',
  'metrics',
  ...[
    'balancing',
    'startupTimeoutMs',
    'backoffInitialMs',
    'backoffMaxMs',
    'stableAfterMs',
    'crashLoopFailures',
    'crashLoopWindowMs',
    'heartbeatIntervalMs',
    'heartbeatTimeoutMs',
    'maxMemoryMB',
    'maxRequests',
    'maxRequestsJitter',
    'allowFastRestarts',
    'allowOversubscription',
  ].map((key) => `cluster.${key}`),
] as const;

/** What the reload acts on: the primary's current config and parts. */
export interface ReloadTarget {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  readonly supervisor: Supervisor;
  /** Reads and validates the config file again; throws `ConfigError`. */
  load(): ResolvedConfig;
  /** Makes `config` the one new workers and the service thread start with. */
  adopt(config: ResolvedConfig): void;
  /** Replaces the primary's service thread with one on the current config (its hooks run first). */
  restartServiceThread(): Promise<void>;
}

/** How a reload ended. */
export type ReloadOutcome = 'reloaded' | 'scaled' | 'invalid' | 'refused' | 'failed';

/**
 * SIGHUP (and `flotilla dev` on a change): reads the config file again.
 * - Invalid: every problem is logged; the cluster keeps running on its config, nothing restarts.
 * - A key of `FIXED_KEYS` changed: refused with the keys named; nothing restarts.
 * - Only `workers` (or `cluster.scaleDownAfterMs`) changed (and `code` is false): the cluster scales up or down
 *   (with `{ min, max }`, into the range, keeping the count the load chose when it is within), no worker restarts.
 * - Otherwise (the same config included: SIGHUP also deploys new code): a rolling restart onto the new config (a new worker listens before an old one leaves),
 *   scaled to the new count, then the service thread is re-created so schedulers and hooks follow.
 *   A replacement that does not come up (its new code or settings fail) stops it: the old
 *   workers keep serving, on the old config when none was replaced.
 */
export async function reloadCluster(target: ReloadTarget, { code }: { code: boolean }): Promise<ReloadOutcome> {
  const { logger, supervisor } = target;
  const before = target.config;
  let next: ResolvedConfig;
  try {
    next = target.load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const problems = error.problems.map(formatProblem);
    logger.error({ problems }, `reload refused: the config is invalid, the cluster keeps its config\n  - ${problems.join('\n  - ')}`);
    return 'invalid';
  }
  const fixed = changedKeys(before, next, FIXED_KEYS);
  if (fixed.length > 0) {
    logger.error({ keys: fixed }, `reload refused: ${fixed.join(', ')} cannot change while the cluster runs; restart it to apply`);
    return 'refused';
  }
  const count = countWithin(workerRange(next.workers), supervisor.count);
  target.adopt(next);
  supervisor.setShutdownBudget(next.shutdown.timeoutMs);
  if (!code && !isDeepStrictEqual(before, next) && isDeepStrictEqual(withScaling(before, next), next)) {
    const from = supervisor.count;
    await supervisor.resize(count);
    logger.info({ from, to: count }, 'reload: only workers changed: scaled, no worker restarted');
    return 'scaled';
  }
  // fewer workers first (less to restart), more after (new slots start on the new config anyway)
  if (count < supervisor.count) await supervisor.resize(count);
  const replaced = await rollingRestart(supervisor, supervisor.count, logger);
  if (!replaced) {
    logger.error('reload failed: a new worker did not come up (see its error above); the old workers keep serving');
    target.adopt(before);
    supervisor.setShutdownBudget(before.shutdown.timeoutMs);
    // a shrink done before the rolling restart is undone: the cluster matches the config it keeps
    const previous = countWithin(workerRange(before.workers), supervisor.count);
    if (supervisor.count !== previous) await supervisor.resize(previous);
    return 'failed';
  }
  if (count > supervisor.count) await supervisor.resize(count);
  await target.restartServiceThread();
  logger.info({ workers: count }, 'reload: done, the cluster runs on the new config');
  return 'reloaded';
}

/** `config` with `next`'s scaling keys: equal to `next` when nothing else changed. */
function withScaling(config: ResolvedConfig, next: ResolvedConfig): ResolvedConfig {
  return { ...config, workers: next.workers, cluster: { ...config.cluster, scaleDownAfterMs: next.cluster.scaleDownAfterMs } };
}

/** The dotted keys among `keys` whose values differ between two configs. */
function changedKeys(a: ResolvedConfig, b: ResolvedConfig, keys: readonly string[]): string[] {
  const at = (config: ResolvedConfig, key: string) => key.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], config);
  return keys.filter((key) => !isDeepStrictEqual(at(a, key), at(b, key)));
}
