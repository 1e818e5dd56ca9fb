import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Logger } from 'pino';
import { settingsFallbacksOf } from '../config/fallback-secrets.ts';
import { adoptSettings, checkSettings } from '../config/settings.ts';
import { unsetPathsOf } from '../config/unset-settings.ts';
import { createError, describeValue } from '../errors/flotilla-error.ts';
import type { App } from './app.ts';

/**
 * A service's setup function: registers routes, checkers, hooks and schedulers
 * on the App it is given. `settingsSchema` is the JSON Schema of the config's
 * `settings` when the service declared one (`defineService({ settings, setup })`);
 * `logger`, the service's logger factory (`defineService({ logger, setup })`).
 */
export type ServiceSetup = ((app: App) => void | Promise<void>) & {
  readonly settingsSchema?: object;
  readonly logger?: () => Logger;
};

/** The App a setup with declared settings receives: `app.settings` typed from the schema. */
export type ServiceApp<S> = App & { readonly settings: S };

/** The settings' type from their JSON Schema (json-schema-to-ts). */
export type SettingsOf<S> = S extends JSONSchema ? FromSchema<S> : Readonly<Record<string, unknown>>;

/** A service with its own settings: their JSON Schema, and the setup that reads them as `app.settings`. */
export interface ServiceDefinition<S extends object> {
  /** The JSON Schema of the config's top-level `settings` key; `writeOnly: true` or `secret: true` marks a secret. */
  settings: S;
  /** See {@link ServiceOptions.logger}. */
  logger?: () => Logger;
  setup(app: ServiceApp<SettingsOf<S>>): void | Promise<void>;
}

/**
 * A service without settings of its own, with the options of {@link defineService}.
 *
 * @example
 * export default defineService({
 *   logger: () => pino({ base: { team: 'books' }, redact: ['req.headers.authorization'] }),
 *   setup(app) { app.registerController(new BooksController()) },
 * });
 */
export interface ServiceOptions {
  /**
   * Makes the service's own pino logger, the App's (see `AppOptions.logger`): called once in each
   * worker, before its App is built, and once in the primary's service thread (for the schedulers'
   * and the shutdown hooks' lines); the primary's main thread runs no service code and keeps
   * flotilla's logger. A function, since each process makes its own (a pino destination or transport
   * does not cross processes). A throw, or a value that is not a pino logger, fails the start.
   */
  logger?: () => Logger;
  setup(app: App): void | Promise<void>;
}

/**
 * Types a service module's default export. In cluster mode the setup runs in
 * every worker (`app.role === 'worker'`) and once in the primary
 * (`app.role === 'primary'`, where only schedulers and shutdown hooks take effect).
 * With a `settings` schema, the config's `settings` are validated before the
 * setup runs (`file:line: settings.…` problems, exit 2) and read as `app.settings`.
 * With `logger`, every process of the service logs through the service's own pino
 * logger (docs/guides/logging.md).
 *
 * @example
 * export default defineService((app) => {
 *   app.registerController(new BooksController());
 * });
 *
 * export default defineService({
 *   settings: { type: 'object', properties: { databaseUrl: { type: 'string', writeOnly: true } }, required: ['databaseUrl'] },
 *   setup(app) { connect(app.settings.databaseUrl) }, // a string, typed from the schema
 * });
 *
 * export default defineService({
 *   logger: () => pino({ redact: ['req.headers.authorization'], base: { team: 'books' } }),
 *   setup(app) { app.logger.info('the team’s logger, in every process') },
 * });
 */
export function defineService(setup: (app: App) => void | Promise<void>): ServiceSetup;
// `const S extends object`, not `extends JSONSchema`: inferring against json-schema-to-ts's schema type is too deep for TypeScript
export function defineService<const S extends object>(definition: ServiceDefinition<S>): ServiceSetup;
export function defineService(definition: ServiceOptions): ServiceSetup;
export function defineService(definition: unknown): ServiceSetup {
  if (typeof definition === 'function') return definition as ServiceSetup;
  const { settings: schema, setup, logger } = (definition ?? {}) as Partial<ServiceDefinition<object>>;
  if (
    typeof setup !== 'function' ||
    (schema !== undefined && (typeof schema !== 'object' || schema === null)) ||
    (logger !== undefined && typeof logger !== 'function')
  ) {
    throw createError('FLO_ERR_BAD_SERVICE_SETUP', { got: describeValue(definition) });
  }
  const factory = logger === undefined ? {} : { logger };
  if (schema === undefined) return Object.assign((app: App) => setup(app as ServiceApp<never>), factory);
  const withSettings = (app: App) => {
    // in production, a secret on its development fallback is refused with the other problems
    adoptSettings(app, checkSettings(schema, app.config.settings, unsetPathsOf(app.config), settingsFallbacksOf(app.config)));
    return setup(app as ServiceApp<never>);
  };
  return Object.assign(withSettings, { settingsSchema: schema }, factory);
}
