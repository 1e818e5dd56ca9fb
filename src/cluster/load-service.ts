import { pathToFileURL } from 'node:url';
import { createError } from '../errors/flotilla-error.ts';

/** A service module's setup function, as loaded: `(app) => void | Promise<void>`. */
export type LoadedSetup<A> = (app: A) => void | Promise<void>;

/**
 * Imports the service module and returns its setup function (the default
 * export, or a named `setup` export).
 */
export async function loadService<A>(servicePath: string): Promise<LoadedSetup<A>> {
  const mod = (await import(pathToFileURL(servicePath).href)) as { default?: unknown; setup?: unknown };
  const setup = typeof mod.default === 'function' ? mod.default : mod.setup;
  if (typeof setup !== 'function') {
    throw createError('FLO_ERR_BAD_SERVICE_MODULE', { path: servicePath });
  }
  return setup as LoadedSetup<A>;
}
