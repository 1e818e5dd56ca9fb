import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** Where to look for the process's cgroups; the defaults are the real system's. */
export interface CgroupOptions {
  /** Mount point of the cgroup file system. Default `/sys/fs/cgroup`. */
  cgroupRoot?: string;
  /** The process's cgroup membership file. Default `/proc/self/cgroup`. */
  procCgroupFile?: string;
}

/** A directory of a controller's files: of the v2 unified hierarchy, or of a v1 controller's mount. */
export interface CgroupDirectory {
  version: 1 | 2;
  dir: string;
}

/**
 * The directories that hold `controller`'s files for this process's cgroup
 * and each of its ancestors up to the root, innermost first: the limits of
 * all of them apply, so the caller takes the tightest. Found from
 * `/proc/self/cgroup`: a `0::<path>` line is cgroup v2 (one unified
 * hierarchy), `<n>:<controllers>:<path>` lines naming `controller` are v1
 * (mounted at `<root>/<controllers>` or `<root>/<controller>`). Walking up to
 * the root also covers a container whose own cgroup is mounted as the root
 * while `/proc/self/cgroup` shows the host's path. Never throws: an unreadable
 * membership file gives no directories.
 *
 * @example
 * cgroupDirectories('memory'); // [{ version: 2, dir: '/sys/fs/cgroup/kubepods/pod1/app' }, …, { version: 2, dir: '/sys/fs/cgroup/' }]
 */
export function cgroupDirectories(controller: string, opts: CgroupOptions = {}): CgroupDirectory[] {
  const root = opts.cgroupRoot ?? '/sys/fs/cgroup';
  const membership = readCgroupFile(opts.procCgroupFile ?? '/proc/self/cgroup') ?? '';
  const dirs: CgroupDirectory[] = [];
  for (const line of membership.split('\n')) {
    const match = /^(\d+):([^:]*):(\/.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, hierarchy, controllers = '', path = '/'] = match;
    if (hierarchy === '0' && controllers === '') {
      for (const dir of ancestors(path)) dirs.push({ version: 2, dir: join(root, dir) });
    } else if (controllers.split(',').includes(controller)) {
      for (const mount of new Set([controllers, controller])) {
        for (const dir of ancestors(path)) dirs.push({ version: 1, dir: join(root, mount, dir) });
      }
    }
  }
  return dirs;
}

/** A cgroup file's text; `undefined` when it cannot be read. */
export function readCgroupFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** `/a/b` → `/a/b`, `/a`, `/` (normalized, so never above the root). */
function ancestors(path: string): string[] {
  const dirs: string[] = [];
  for (let dir = posix.normalize(path); ; dir = posix.dirname(dir)) {
    dirs.push(dir);
    if (dir === '/' || dir === '.') return dirs;
  }
}
