import { readFileSync } from 'node:fs';

/** The text of a /proc file; undefined when it is not there (e.g. `/proc/<pid>/…` of a process that is gone). */
export function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Whether a process is still running. A zombie (exited, not yet reaped by
 * whoever inherited it) counts as gone: it runs no code and holds no socket.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return false;
  // the state follows the command name, which may hold spaces and parentheses
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}
