import type { Stats } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { sep } from 'node:path';

/** Files whose check a guard remembers; past it, it forgets them all and starts again. */
const REMEMBERED = 10_000;

/**
 * Whether a file of a mount really is inside its directory: its real path (every symbolic link on
 * the way resolved) under the directory's real path. A file found inside is remembered with its
 * identity (device, inode, change time, size): while the same path stats to the same identity, it
 * is the same file, reached the same way (a rename, a new link or a replaced directory on the way
 * changes the change time or the inode), and its real path is not looked up again; `realpath`
 * costs a lookup per path component, some 40 µs a request on a busy core.
 *
 * @example
 * const guard = new RootGuard(realpathSync('public'));
 * if (!(await guard.inside(file, stat))) return notFound();
 */
export class RootGuard {
  readonly #root: string;
  readonly #under: string;
  readonly #checked = new Map<string, string>();

  constructor(realRoot: string) {
    this.#root = realRoot;
    this.#under = realRoot.endsWith(sep) ? realRoot : realRoot + sep;
  }

  async inside(file: string, stat: Stats): Promise<boolean> {
    const identity = `${stat.dev}:${stat.ino}:${stat.ctimeMs}:${stat.size}`;
    if (this.#checked.get(file) === identity) return true;
    const real = await realpath(file);
    if (real !== this.#root && !real.startsWith(this.#under)) return false;
    if (this.#checked.size >= REMEMBERED) this.#checked.clear();
    this.#checked.set(file, identity);
    return true;
  }
}
