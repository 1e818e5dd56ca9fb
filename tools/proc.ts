import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

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

/**
 * The sockets listening on TCP `port` (IPv4 and IPv6), each as the pids that hold it (Linux: the LISTEN
 * entries of /proc/net/tcp*, matched by inode with every process's open files): `[[primary]]` for a
 * socket only the primary holds (node:cluster's round robin), `[[primary, w1, w2]]` for one it shares
 * with its workers, `[[w1], [w2]]` for SO_REUSEPORT sockets of the workers' own.
 */
export function listeningSocketHolders(port: number): number[][] {
  const holders = new Map<string, number[]>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (readProc(file) ?? '').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields[3]: the state (0A = LISTEN); fields[9]: the socket's inode
      if (fields[3] === '0A' && Number.parseInt(fields[1]?.split(':')[1] ?? '', 16) === port) holders.set(fields[9] ?? '', []);
    }
  }
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      const pids = inode === undefined ? undefined : holders.get(inode);
      if (pids !== undefined && !pids.includes(Number(pid))) pids.push(Number(pid));
    }
  }
  return [...holders.values()];
}
