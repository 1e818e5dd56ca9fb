import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ResolvedConfig } from '../config/types.ts';
import { coordinationMetrics } from '../metrics/coordination-metrics.ts';
import type { FireCoordinator, Scheduler, SchedulerEnv } from '../scheduler/scheduler.ts';
import { ClockSkewError, type Coordinator, type CoordinatorOptions, describeError, fireTimeOf, Link } from './coordinator.ts';
import { LeaseRunner } from './lease-runner.ts';

/** The schedulers of an App or a ServicePart once started; see {@link startSchedulers}. */
export interface RunningSchedulers {
  /**
   * Stops one scheduler: its shutdown hook. Once every scheduler has stopped, the lease is
   * released and the coordinator's connections are closed.
   */
  stop(scheduler: Scheduler, signal: AbortSignal): Promise<void>;
}

/**
 * Binds and starts the schedulers where they run once per process tree (a standalone App, the
 * cluster's service thread). Without `coordination.url`, each is bound and started, as ever. With
 * it, the coordinator is opened (its client package imported only then), the `per-fire`
 * schedulers are bound with `env.coordinator` and started on every replica, and the others run
 * under the service's lease (`LeaseRunner`): started on the holder only.
 *
 * @example
 * const running = await startSchedulers(schedulers, { logger, registry, tracer }, config);
 * app.onShutdown((signal) => running.stop(scheduler, signal));
 */
export async function startSchedulers(
  schedulers: readonly Scheduler[],
  env: SchedulerEnv,
  config: ResolvedConfig,
): Promise<RunningSchedulers> {
  const url = config.coordination.url ?? '';
  if (url === '' || schedulers.length === 0) {
    for (const scheduler of schedulers) {
      scheduler.bind?.(env);
      await scheduler.start();
    }
    return { stop: async (scheduler, signal) => scheduler.stop(signal) };
  }

  const { leaseTtlMs, leaseRenewMs, maxClockSkewMs } = config.coordination;
  const backend = backendOf(url);
  const logger = env.logger.child({ component: 'coordination', backend });
  const metrics = coordinationMetrics(env.registry, backend);
  const { coordinator, holder } = await openCoordinator(config, logger, (connected) => metrics.connected.set({ backend }, connected));

  const fires: FireCoordinator = {
    backend,
    ttlMs: 2 * maxClockSkewMs,
    async shouldRun(key, ttlMs) {
      const started = performance.now();
      const job = jobOf(key);
      try {
        const won = await coordinator.claim(key, ttlMs);
        metrics.claims.inc({ job, result: won ? 'won' : 'taken' });
        return won;
      } catch (error) {
        const skew = error instanceof ClockSkewError;
        metrics.claims.inc({ job, result: skew ? 'clock-skew' : 'error' });
        // what the scheduler logs: the message and code, never the client an error may carry
        if (skew) throw error;
        const summary = describeError(error);
        const clean = Object.assign(new Error(summary.message), summary);
        clean.stack = `${summary.type}: ${summary.message}`; // where it was thrown is the client's business
        throw clean;
      } finally {
        metrics.claimDuration.observe({ backend }, (performance.now() - started) / 1000);
      }
    },
  };
  const perFire = schedulers.filter((s) => s.coordination === 'per-fire');
  const leased = schedulers.filter((s) => s.coordination !== 'per-fire');
  const lease =
    leased.length === 0
      ? undefined
      : new LeaseRunner({
          coordinator,
          schedulers: leased,
          env,
          ttlMs: leaseTtlMs,
          renewMs: leaseRenewMs,
          logger,
          held: (held) => metrics.leaseHeld.set({ backend }, held ? 1 : 0),
        });
  // while no fire or renewal is asked for, this keeps the connected gauge (and the log) up to date
  const probe = setInterval(() => coordinator.ping().catch(() => {}), leaseRenewMs);
  probe.unref();
  logger.info({ holder, perFire: perFire.length, leased: leased.length }, 'schedulers coordinated across replicas');
  for (const scheduler of perFire) {
    scheduler.bind?.({ ...env, coordinator: fires });
    await scheduler.start();
  }
  lease?.start();

  let running = schedulers.length;
  return {
    async stop(scheduler, signal) {
      try {
        await (lease?.has(scheduler) === true ? lease.stop(scheduler, signal) : scheduler.stop(signal));
      } finally {
        if (--running === 0) {
          clearInterval(probe);
          await lease?.close();
          await coordinator.close();
        }
      }
    },
  };
}

function jobOf(key: string): string {
  try {
    return fireTimeOf(key).job;
  } catch {
    return 'unknown';
  }
}

/** `redis` for `redis://` and `rediss://` URLs, else `postgres`. */
function backendOf(url: string): 'redis' | 'postgres' {
  return /^rediss?:/.test(url) ? 'redis' : 'postgres';
}

/**
 * Opens the coordinator of `coordination.url` (its client package imported only then), as this
 * replica: its name (`holder`) is the host, the pid and a random part. The schedulers' (above) and the
 * primary's topic relay (`src/primary/topic-relay.ts`) each open their own.
 *
 * @example
 * const { coordinator } = await openCoordinator(config, logger, () => {});
 * await coordinator.listen((message) => relay.received(message));
 */
export async function openCoordinator(
  config: ResolvedConfig,
  logger: import('pino').Logger,
  connected: (value: 0 | 1) => void,
): Promise<{ coordinator: Coordinator; holder: string }> {
  const url = config.coordination.url ?? '';
  const { leaseTtlMs, leaseRenewMs, timeoutMs } = config.coordination;
  const holder = `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  const options: CoordinatorOptions = {
    url,
    service: config.serviceName,
    holder,
    timeoutMs,
    leaseTtlMs,
    leaseRenewMs,
    logger,
    link: new Link(logger, connected),
  };
  const coordinator =
    backendOf(url) === 'redis'
      ? await (await import('./redis.ts')).redisCoordinator(options)
      : await (await import('./postgres.ts')).postgresCoordinator(options);
  return { coordinator, holder };
}
