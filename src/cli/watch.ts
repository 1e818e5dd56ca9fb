import { dirname, relative, resolve, sep } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { isIgnoredPath } from './editor-files.ts';

/** Changes within this long of each other make one restart (an editor's save writes several times). */
export const SETTLE_MS = 100;

/** What `watchService` reports once a burst of changes settled. */
export interface Change {
  /** The last file changed, added or deleted in the burst (editors' temporary files aside). */
  file: string;
  /** Only the config file changed. */
  isConfig: boolean;
}

/** What `flotilla dev` watches. */
export interface Watched {
  /** The service module: its whole directory is watched. */
  servicePath: string;
  configFile: string;
  /** More folders or files (`dev.watch`, resolved): watched whole, whether they exist yet or not. */
  also?: readonly string[];
}

/** A path equal to `base` or inside it. */
const within = (path: string, base: string) => path === base || path.startsWith(base + sep);

/**
 * Watches the service's directory (recursively, new folders included), the
 * config file and the `also` paths with chokidar, which, unlike `fs.watch`,
 * keeps seeing a file that a save replaced (write-temp-then-rename, `sed -i`)
 * and a folder created after the watch began. Calls `changed` once per burst
 * of changes, `SETTLE_MS` after the last, with the file the user saved:
 * editors' temporary and swap files are ignored (`isIgnoredPath`), and so is
 * a watched folder's own creation or removal. `ready` resolves once the first
 * scan is done; `paths` are the trees watched (the service's directory first),
 * an `also` path inside another left out. Loaded by `flotilla dev` only.
 *
 * @example
 * const watcher = watchService({ servicePath: '/srv/app/service.ts', configFile: 'app.yaml', also: ['/srv/migrations'] }, ({ file }) => console.log(file, 'changed'));
 * await watcher.ready; … await watcher.close();
 */
export function watchService(
  { servicePath, configFile, also = [] }: Watched,
  changed: (change: Change) => void,
): { ready: Promise<void>; close: () => Promise<void>; paths: string[] } {
  const root = dirname(servicePath);
  const config = resolve(configFile);
  const paths = [root];
  for (const path of [...new Set(also.map((p) => resolve(p)))].sort((a, b) => a.length - b.length)) {
    if (!paths.some((base) => within(path, base))) paths.push(path);
  }
  let timer: NodeJS.Timeout | undefined;
  let pending: Change | undefined;
  const note = (event: string, file: string) => {
    const isConfig = file === config;
    if (!isConfig) {
      const base = paths.find((p) => within(file, p));
      if (base === undefined || (file === base && (base === root || event === 'addDir' || event === 'unlinkDir'))) return;
      if (isIgnoredPath(relative(base, file))) return;
    }
    pending = { file, isConfig: isConfig && pending?.isConfig !== false };
    clearTimeout(timer);
    timer = setTimeout(() => {
      const what = pending;
      pending = undefined;
      if (what !== undefined) changed(what);
    }, SETTLE_MS);
  };
  const options = { ignoreInitial: true, atomic: true } as const;
  const watchers: FSWatcher[] = paths.map((base) =>
    watch(base, {
      ...options,
      ignored: (path: string) => path !== base && path.startsWith(base + sep) && isIgnoredPath(relative(base, path)),
    }),
  );
  // the config file outside the watched trees: its own directory, one level, for a save that renames over it
  if (!paths.some((base) => within(config, base))) watchers.push(watch(dirname(config), { ...options, depth: 0 }));
  for (const w of watchers) {
    w.on('all', (event, path) => note(event, resolve(path)));
    w.on('error', () => {});
  }
  return {
    ready: Promise.all(watchers.map((w) => new Promise<void>((done) => w.once('ready', () => done())))).then(() => {}),
    close: async () => {
      clearTimeout(timer);
      await Promise.all(watchers.map((w) => w.close()));
    },
    paths,
  };
}
