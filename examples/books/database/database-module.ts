import type { App, Module } from 'flotilla';
import type { Database } from './database.ts';
import { databaseProblem } from './database-errors.ts';

/**
 * The database's part in the service's life, beside the migrations (see
 * `service.ts`):
 * - a `database` health checker (`SELECT 1`, bounded by `health.timeoutMs`);
 * - the driver's errors as problems (503 while the database is away, 409 for
 *   a unique violation), never its text;
 * - the pool closed by a shutdown hook, within the shutdown's budget (the
 *   hook's signal aborts at the deadline).
 *
 * @example
 * app.use(databaseModule(db));
 */
export function databaseModule(db: Database): Module {
  return {
    register(app: App) {
      app.registerHealthChecker({
        name: 'database',
        check: async (signal) => {
          await db.query('SELECT 1', [], signal);
        },
      });

      app.setErrorHandler(databaseProblem);

      app.onShutdown(async (signal) => {
        await db.close(signal);
        app.logger.info({ database: db.kind }, 'database closed');
      });
    },
  };
}
