import type { Logger } from 'pino';
import type { Supervisor } from './supervisor.ts';

/**
 * SIGHUP: replaces the workers one slot at a time, each new worker listening
 * before the old one starts its graceful shutdown, so no request is dropped.
 * Stops at the first replacement that does not come up (the old workers keep
 * serving). Resolves with whether every slot was replaced.
 */
export async function rollingRestart(supervisor: Supervisor, slots: number, logger: Logger): Promise<boolean> {
  const started = Date.now();
  logger.info({ slots }, 'rolling restart: started');
  for (let index = 0; index < slots; index++) {
    if (!(await supervisor.replace(index))) {
      logger.error({ slot: index }, 'rolling restart: stopped');
      return false;
    }
  }
  logger.info({ slots, elapsedMs: Date.now() - started }, 'rolling restart: done');
  return true;
}
