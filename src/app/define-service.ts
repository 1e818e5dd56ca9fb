import { createError, describeValue } from '../errors/flotilla-error.ts';
import type { App } from './app.ts';

/** A service's setup function: registers routes, checkers, hooks and schedulers on the App it is given. */
export type ServiceSetup = (app: App) => void | Promise<void>;

/**
 * Types a service module's default export. In cluster mode the setup runs in
 * every worker (`app.role === 'worker'`) and once in the primary
 * (`app.role === 'primary'`, where only schedulers and shutdown hooks take effect).
 *
 * @example
 * export default defineService((app) => {
 *   app.registerController(new BooksController());
 *   app.registerScheduler(new CronScheduler([{ name: 'report', cron: '0 * * * *', run: report }]));
 * });
 */
export function defineService(setup: ServiceSetup): ServiceSetup {
  if (typeof setup !== 'function') throw createError('FLO_ERR_BAD_SERVICE_SETUP', { got: describeValue(setup) });
  return setup;
}
