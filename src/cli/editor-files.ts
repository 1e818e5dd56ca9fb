import { basename } from 'node:path';

/**
 * What `flotilla dev` never restarts for: directories it does not watch
 * (`node_modules`, `.git`, `dist`, `coverage`) and dot-files, logs
 * (`flotilla dev > dev.log` must not restart on its own output), and the
 * temporary and swap files editors and tools write beside the file saved:
 * Vim (`.x.swp`, `.x.swo`, `x~`, `4913`), Emacs (`.#x`, `#x#`), Kate
 * (`.x.kate-swp`), JetBrains IDEs (`x___jb_tmp___`, `x___jb_old___`),
 * `sed -i` (`sedAbC123`), and any `*.tmp`. `path` is relative to the watched
 * directory.
 *
 * @example
 * isIgnoredPath('src/.service.ts.swp'); // true
 * isIgnoredPath('src/service.ts'); // false
 */
export function isIgnoredPath(path: string): boolean {
  if (IGNORED_DIRS.test(path)) return true;
  const name = basename(path);
  return EDITOR_FILES.some((pattern) => pattern.test(name));
}

const IGNORED_DIRS = /(^|[/\\])(node_modules|\.git|dist|coverage)([/\\]|$)/;

const EDITOR_FILES = [
  /^\./, // dot-files: Vim's .x.swp, Emacs's .#x lock links, Kate's .x.kate-swp, .DS_Store…
  /~$/, // backups: Vim, Emacs, gedit
  /^#.*#$/, // Emacs auto-save
  /\.(swp|swo|swx|tmp|log)$/i,
  /^4913$/, // Vim's probe that the directory is writable
  /___jb_(tmp|old)___$/, // JetBrains' safe write
  /^sed[A-Za-z0-9]{6}$/, // sed -i's temporary copy
];
