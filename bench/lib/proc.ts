import { execFileSync } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { readProc } from '../../tools/proc.ts';

/** Clock ticks per second of `/proc/<pid>/stat` times. */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a `/proc/…/stat` line, in ticks. */
function statTicks(stat: string): number {
  // fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** utime + stime of a process (all its threads), in ticks; 0 when it is gone. */
export function cpuTicks(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`);
  return stat === undefined ? 0 : statTicks(stat);
}

export interface ThreadStat {
  tid: number;
  /** The thread's name (`comm`): `MainThread`, `WorkerThread` (a worker_threads Worker), `V8Worker`, `libuv-worker`, … */
  comm: string;
  /** utime + stime, in ticks. */
  ticks: number;
  /** voluntary + nonvoluntary context switches so far: each is the thread going off the CPU, a proxy for its wake-ups. */
  switches: number;
}

/** Every thread of a process, from `/proc/<pid>/task/<tid>/stat` and `status`; empty when it is gone. */
export function threadStats(pid: number): ThreadStat[] {
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    const stat = readProc(`/proc/${pid}/task/${tid}/stat`);
    const status = readProc(`/proc/${pid}/task/${tid}/status`);
    if (stat === undefined || status === undefined) return [];
    const count = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)$`, 'm').exec(status)?.[1] ?? 0);
    return [
      {
        tid: Number(tid),
        comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        ticks: statTicks(stat),
        switches: count('voluntary_ctxt_switches') + count('nonvoluntary_ctxt_switches'),
      },
    ];
  });
}

/** The pid and all its descendants (cluster workers), found through `/proc/<pid>/task/<tid>/children`. */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${tree[i]}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      for (const child of (readProc(`/proc/${tree[i]}/task/${tid}/children`) ?? '').split(' ')) {
        if (child !== '' && !tree.includes(Number(child))) tree.push(Number(child));
      }
    }
  }
  return tree;
}

/**
 * Established TCP connections to local `port` (IPv4) that each of `pids`
 * holds open: its `/proc/<pid>/fd` sockets matched with `/proc/net/tcp` by inode.
 */
export function connectionsOf(pids: readonly number[], port: number): number[] {
  const portHex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const line of (readProc('/proc/net/tcp') ?? '').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // local_address is field 1, st field 3 (01: ESTABLISHED), inode field 9
    if (f[1]?.endsWith(portHex) && f[3] === '01' && f[9] !== undefined) inodes.add(f[9]);
  }
  return pids.map((pid) => {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {}
    let n = 0;
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m !== null && inodes.has(m[1]!)) n++;
      } catch {}
    }
    return n;
  });
}

/** CPU seconds used so far by a process and its descendants. */
export function treeCpuSeconds(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuTicks(p), 0) / CLK_TCK;
}

/**
 * VmRSS of a process and its RssAnon part (private memory; the rest is mostly
 * the node binary's file pages, shared by every node process), in MB (MiB);
 * undefined when it is gone.
 */
export function rssMb(pid: number): { rss: number; anon: number } | undefined {
  const status = readProc(`/proc/${pid}/status`) ?? '';
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  const rss = kb('VmRSS');
  return Number.isNaN(rss) ? undefined : { rss, anon: kb('RssAnon') };
}

/** Busy (user + nice + system) and steal seconds of each CPU (`cpu0`, `cpu1`, …) and of all (`cpu`), from /proc/stat. */
export function cpuTimes(): Map<string, { busy: number; steal: number }> {
  const times = new Map<string, { busy: number; steal: number }>();
  for (const line of (readProc('/proc/stat') ?? '').split('\n')) {
    if (!line.startsWith('cpu')) continue;
    const [name, user, nice, system, , , , , steal] = line.split(/\s+/);
    times.set(name!, { busy: (Number(user) + Number(nice) + Number(system)) / CLK_TCK, steal: Number(steal) / CLK_TCK });
  }
  return times;
}

/** Fraction of all CPUs busy over `ms` milliseconds. */
export async function busyFraction(ms: number): Promise<number> {
  const before = cpuTimes().get('cpu');
  await new Promise((r) => setTimeout(r, ms));
  const after = cpuTimes().get('cpu');
  const cores = [...cpuTimes().keys()].length - 1;
  return before && after ? (after.busy - before.busy + after.steal - before.steal) / ((ms / 1000) * Math.max(1, cores)) : 0;
}

/** Waits until the machine is idle (< `threshold` busy over a second), at most `maxS` seconds; returns the last busy fraction. */
export async function waitQuiet(maxS: number, threshold = 0.1, onWait: (busy: number) => void = () => {}): Promise<number> {
  const until = performance.now() + maxS * 1000;
  let busy = await busyFraction(1000);
  while (busy >= threshold && performance.now() < until) {
    onWait(busy);
    busy = await busyFraction(2000);
  }
  return busy;
}
