import { createError } from '../errors/flotilla-error.ts';

/**
 * The client package a coordination backend runs on, imported on first use only (an optional
 * dependency: `npm install --omit=optional` leaves it out). Missing, it is a start-up error that
 * names the package, never a stack trace about module resolution.
 *
 * @example
 * const { createClient } = await importClient<typeof import('@redis/client')>('@redis/client', url);
 */
export async function importClient<T>(name: string, url: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw createError('FLO_ERR_COORDINATION_CLIENT_MISSING', { scheme: url.slice(0, url.indexOf(':')), name }, { cause: error });
  }
}
