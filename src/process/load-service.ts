import { pathToFileURL } from 'node:url';
import { undeclaredSettings } from '../config/settings.ts';
import { createError } from '../errors/flotilla-error.ts';

/** A service module's setup function, as loaded: `(app) => void | Promise<void>`, with its logger factory (`defineService({ logger })`). */
export type LoadedSetup<A> = ((app: A) => void | Promise<void>) & { readonly settingsSchema?: object; readonly logger?: () => unknown };

/**
 * Imports the service module and returns its setup function (the default
 * export, or a named `setup` export). The setup refuses a config with
 * `settings` when the service declares no schema for them (a `ConfigError`).
 */
export async function loadService<A extends { readonly config: { readonly settings?: unknown } }>(
  servicePath: string,
): Promise<LoadedSetup<A>> {
  const mod = (await import(pathToFileURL(servicePath).href)) as { default?: unknown; setup?: unknown };
  const setup = (typeof mod.default === 'function' ? mod.default : mod.setup) as LoadedSetup<A> | undefined;
  if (typeof setup !== 'function') {
    throw createError('FLO_ERR_BAD_SERVICE_MODULE', { path: servicePath });
  }
  if (setup.settingsSchema !== undefined) return setup;
  const refusingSettings = (app: A) => {
    if (app.config.settings !== undefined) throw undeclaredSettings();
    return setup(app);
  };
  return setup.logger === undefined ? refusingSettings : Object.assign(refusingSettings, { logger: setup.logger });
}
