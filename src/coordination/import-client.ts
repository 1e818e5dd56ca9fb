import { createError } from '../errors/flotilla-error.ts';

/** The client package a `coordination.url` runs on, by its scheme: node-redis or node-postgres. */
export type ClientPackage = '@redis/client' | 'pg';

/**
 * The client package of a `coordination.url` (an optional peer dependency of flotilla): `@redis/client`
 * for `redis://` and `rediss://`, `pg` for `postgres://` and `postgresql://`; `undefined` for no URL.
 *
 * @example
 * clientPackageOf('rediss://cache:6380'); // '@redis/client'
 */
export function clientPackageOf(url: string | undefined): ClientPackage | undefined {
  if (url === undefined || url === '') return undefined;
  return /^rediss?:/.test(url) ? '@redis/client' : 'pg';
}

/**
 * The client package `url` needs, when it cannot be found from flotilla's own location (where
 * {@link importClient} imports it from): what `flotilla start` checks before any port opens, so
 * that a service installed without it stops at once with a config error instead of failing in
 * its workers. Resolving imports nothing: a service that has the package loads it on first use only.
 *
 * @example
 * missingClient('redis://redis:6379'); // { scheme: 'redis', name: '@redis/client' } when not installed
 */
export function missingClient(url: string | undefined): { scheme: string; name: ClientPackage } | undefined {
  const name = clientPackageOf(url);
  if (name === undefined) return undefined;
  try {
    import.meta.resolve(name);
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return { scheme: schemeOf(url!), name };
  }
}

/**
 * The client package a coordination backend runs on, imported on first use only (an optional peer
 * dependency: a service installs the one its `coordination.url` names). Missing, it is a start-up
 * error that names the package, never a stack trace about module resolution.
 *
 * @example
 * const { createClient } = await importClient<typeof import('@redis/client')>('@redis/client', url);
 */
export async function importClient<T>(name: string, url: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw createError('FLO_ERR_COORDINATION_CLIENT_MISSING', { scheme: schemeOf(url), name }, { cause: error });
  }
}

function schemeOf(url: string): string {
  return url.slice(0, url.indexOf(':'));
}
