/**
 * The modules flotilla starts as processes and threads of their own (and the ones those load after
 * their preloads), the ones it requires only when needed (the config's generated validator, which a
 * worker never loads), by name, and the package's own files. Located relative to this module, which sits at the root of `src/` (the
 * sources, `.ts`) and whose code sits at the root of `dist/` in the published build, where
 * `tools/bundle.ts` checks that it does: a chunk of the bundle lives elsewhere than the module it
 * came from, so no other module computes such a path.
 *
 * @example
 * cluster.setupPrimary({ exec: fileURLToPath(entryPoint('worker-entry')) });
 */
export type EntryPoint =
  | 'worker/worker-entry'
  | 'worker/worker-main'
  | 'worker/watchdog-thread'
  | 'primary/service-thread'
  | 'primary/service-thread-main'
  | 'primary/settings-check-thread'
  | 'config/config-validator';

/** Every entry point: the bundle's entries beside `index` and `cli/main`. */
export const ENTRY_POINTS: readonly EntryPoint[] = [
  'worker/worker-entry',
  'worker/worker-main',
  'worker/watchdog-thread',
  'primary/service-thread',
  'primary/service-thread-main',
  'primary/settings-check-thread',
  'config/config-validator',
];

const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** flotilla's package.json (its version), one level above `src/` and `dist/` alike. */
export const PACKAGE_JSON = new URL('../package.json', import.meta.url);

/** The URL of an entry point, in the same form (sources or build) as the running code. */
export function entryPoint(name: EntryPoint): URL {
  return new URL(`./${name}${EXT}`, import.meta.url);
}
