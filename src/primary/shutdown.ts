import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Supervisor } from './supervisor.ts';
import { sendShutdown } from './worker-process.ts';

/** The primary's share of the service: its schedulers and shutdown hooks, in the service thread (`service-host.ts`). */
export interface PrimaryHost {
  /** Runs the hooks; resolves once they ran or at `deadline` (epoch ms). */
  close(deadline: number): Promise<void>;
  readonly cleanShutdown: boolean;
}

export interface PrimaryShutdownPlan {
  readonly logger: Logger;
  readonly supervisor: Supervisor;
  readonly host: PrimaryHost | undefined;
  readonly budgetMs: number;
  /** Extra time for workers to exit after their own budget, before SIGKILL. */
  readonly marginMs: number;
  /** The primary's listener and connection queue (`balancing: primary`), closed once `drainDelayMs` has passed. */
  readonly connections?: { close(): Promise<void> } | undefined;
  readonly drainDelayMs: number;
}

/**
 * The primary's shutdown sequence (ARCHITECTURE.md, "SIGTERM's path"): stop
 * restarting → relay the shutdown to every worker and to the service thread
 * (its schedulers stop, its hooks run) → after `drainDelayMs`, close the
 * listener and hand what waits to the draining workers →
 * wait for the workers → SIGKILL any still alive at the budget plus the margin.
 * Resolves with `true` when everything ended cleanly in time.
 */
export async function runPrimaryShutdown(plan: PrimaryShutdownPlan): Promise<boolean> {
  const { logger, supervisor, host } = plan;
  const started = Date.now();
  const phase = (name: string, extra: object = {}) =>
    logger.info({ phase: name, elapsedMs: Date.now() - started, ...extra }, `primary shutdown: ${name}`);
  const limit = plan.budgetMs + plan.marginMs;
  let timer: NodeJS.Timeout | undefined;
  const budgetSpent = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), limit);
  });

  phase('stop-restarts');
  supervisor.stopRestarting();

  const workers = supervisor.liveWorkers;
  phase('relay', { workers: workers.length });
  for (const worker of workers) {
    if (!sendShutdown(worker, started + plan.budgetMs))
      logger.warn({ workerPid: worker.process.pid }, 'could not relay the shutdown: killed the worker');
  }

  // the workers keep taking connections while /health says 503 for drainDelayMs, then the listener closes:
  // what the kernel and the queue hold is handed to the draining workers, not reset
  const doorsClosed = plan.connections === undefined ? Promise.resolve() : closeDoors(plan.connections, plan.drainDelayMs, phase);

  phase('primary-hooks');
  const hostClosed = host?.close(started + plan.budgetMs) ?? Promise.resolve();

  phase('wait-workers');
  const outcome = await Promise.race([
    Promise.all([supervisor.allExited(), hostClosed, doorsClosed]).then(() => 'done' as const),
    budgetSpent,
  ]);
  let killed = 0;
  if (outcome === 'timeout') {
    killed = supervisor.liveWorkers.length;
    phase('kill', { workers: killed });
    supervisor.kill('SIGKILL');
    await Promise.race([supervisor.allExited(), new Promise((r) => setTimeout(r, 1_000).unref())]);
  }
  clearTimeout(timer);
  const ok = outcome === 'done' && killed === 0 && supervisor.uncleanExits === 0 && (host?.cleanShutdown ?? true);
  phase('done', { ok });
  return ok;
}

async function closeDoors(connections: { close(): Promise<void> }, drainDelayMs: number, phase: (name: string) => void): Promise<void> {
  if (drainDelayMs > 0) await delay(drainDelayMs);
  phase('close-listener');
  await connections.close();
  phase('listener-closed');
}
