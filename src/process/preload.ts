import { pathToFileURL } from 'node:url';

/**
 * Imports the config's `preload` modules (absolute paths, as `loadConfigFile`
 * resolves them) one after the other, in order. A worker's entry does it
 * before it loads the worker and the service (`src/worker/worker-entry.ts`),
 * the service thread before the service; the watchdog thread never does.
 * Not `--import` in the workers' flags: worker threads inherit those, and
 * the watchdog thread would load an SDK too.
 *
 * @example
 * await importPreloads(config.preload);
 */
export async function importPreloads(preload: readonly string[]): Promise<void> {
  for (const path of preload) {
    try {
      await import(pathToFileURL(path).href);
    } catch (error) {
      throw new PreloadError(path, error);
    }
  }
}

/**
 * A `preload` module that failed to load (its import threw).
 *
 * @example
 * if (error instanceof PreloadError) console.error(error.path);
 */
export class PreloadError extends Error {
  override name = 'PreloadError';
  readonly path: string;

  constructor(path: string, cause: unknown) {
    super(`the preload module ${path} failed: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`, { cause });
    this.path = path;
  }
}
