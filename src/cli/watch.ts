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

/**
 * Watches the service's directory (recursively, new folders included) and the
 * config file with chokidar, which, unlike `fs.watch`, keeps seeing a file that
 * a save replaced (write-temp-then-rename, `sed -i`). Calls `changed` once per
 * burst of changes, `SETTLE_MS` after the last, with the file the user saved:
 * editors' temporary and swap files are ignored (`isIgnoredPath`). `ready`
 * resolves once the first scan is done. Loaded by `flotilla dev` only.
 *
 * @example
 * const watcher = watchService('/srv/app/service.ts', 'app.yaml', ({ file }) => console.log(file, 'changed'));
 * await watcher.ready; … await watcher.close();
 */
export function watchService(
  servicePath: string,
  configFile: string,
  changed: (change: Change) => void,
): { ready: Promise<void>; close: () => Promise<void> } {
  const root = dirname(servicePath);
  const config = resolve(configFile);
  let timer: NodeJS.Timeout | undefined;
  let pending: Change | undefined;
  const note = (file: string) => {
    const isConfig = file === config;
    if (!isConfig && (file === root || !file.startsWith(root + sep) || isIgnoredPath(relative(root, file)))) return;
    pending = { file, isConfig: isConfig && pending?.isConfig !== false };
    clearTimeout(timer);
    timer = setTimeout(() => {
      const what = pending;
      pending = undefined;
      if (what !== undefined) changed(what);
    }, SETTLE_MS);
  };
  const options = { ignoreInitial: true, atomic: true } as const;
  const watchers: FSWatcher[] = [
    watch(root, {
      ...options,
      ignored: (path: string) => path !== root && path.startsWith(root + sep) && isIgnoredPath(relative(root, path)),
    }),
  ];
  // the config file outside the service's directory: its own directory, one level, for a save that renames over it
  if (!config.startsWith(root + sep)) watchers.push(watch(dirname(config), { ...options, depth: 0 }));
  for (const w of watchers) {
    w.on('all', (_event, path) => note(resolve(path)));
    w.on('error', () => {});
  }
  return {
    ready: Promise.all(watchers.map((w) => new Promise<void>((done) => w.once('ready', () => done())))).then(() => {}),
    close: async () => {
      clearTimeout(timer);
      await Promise.all(watchers.map((w) => w.close()));
    },
  };
}
