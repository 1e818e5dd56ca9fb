import { isIPv4 } from 'node:net';
import { endianness } from 'node:os';
import { isAlive, readProc } from '../../tools/proc.ts';
import { now, sleep } from './clock.ts';

/** Resolves with the time (ms epoch) at which none of `pids` was alive any more, or undefined after `timeoutMs`. */
export async function whenGone(pids: readonly number[], timeoutMs: number, pollMs = 5): Promise<number | undefined> {
  const deadline = now() + timeoutMs;
  for (;;) {
    if (!pids.some(isAlive)) return now();
    if (now() > deadline) return undefined;
    await sleep(pollMs);
  }
}

/** VmRSS of a process in MiB; undefined when it is gone. */
export function rssMb(pid: number): number | undefined {
  const status = readProc(`/proc/${pid}/status`);
  const kb = status === undefined ? undefined : /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) / 1024;
}

/** TCP ports in the LISTEN state on this machine (IPv4 and IPv6), from /proc/net/tcp*. */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (readProc(file) ?? '').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== '0A') continue; // 0A = TCP_LISTEN
      const port = Number.parseInt(fields[1]?.split(':')[1] ?? '', 16);
      if (Number.isFinite(port)) ports.add(port);
    }
  }
  return ports;
}

/** CPU time a process has used so far (user + system), in ms; NaN when it is gone. */
export function cpuMs(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return Number.NaN;
  // utime and stime are fields 14 and 15 (1-based); after the command name, indexes 11 and 12
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_S) * 1000;
}

/** The 1-minute load average and the CPU count, to say how busy the machine was. */
export function machineLoad(): { load1: number; cpus: number } {
  const load1 = Number((readProc('/proc/loadavg') ?? 'NaN').split(' ')[0]);
  const cpus = (readProc('/proc/cpuinfo') ?? '').split('\n').filter((l) => l.startsWith('processor')).length;
  return { load1, cpus };
}

const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

/** A TCP connection as one side sees it: its ports, and its IPv4 addresses when ports alone could be ambiguous. */
export interface TcpConnection {
  local: number;
  remote: number;
  localAddress?: string | undefined;
  remoteAddress?: string | undefined;
}

/**
 * The kernel's state of each of this machine's TCP sockets bound to `local` and connected to `remote`
 * (`CLOSE_WAIT` once the peer closed its side); undefined when no such socket exists any more. Reads
 * /proc/net/tcp* once for all of them (it lists every socket of the machine: reading it is not free),
 * and sees sockets even when their process never reads from them (a slow reader). `net` is the
 * network namespace's view to read: `/proc/<pid>/net` for the namespace of process `pid`. Give the
 * addresses when the sockets' peers are in another namespace: ports repeat across namespaces.
 */
export function tcpStates(sockets: readonly TcpConnection[], net = '/proc/net'): (string | undefined)[] {
  const text = `${readProc(`${net}/tcp`) ?? ''}\n${readProc(`${net}/tcp6`) ?? ''}`;
  const port = (p: number) => p.toString(16).toUpperCase().padStart(4, '0');
  return sockets.map((s) => {
    const local = `${hexAddress(s.localAddress)}:${port(s.local)}`;
    const remote = `${hexAddress(s.remoteAddress)}:${port(s.remote)}`;
    const match = new RegExp(`${local} ${remote} ([0-9A-F]{2}) `).exec(text);
    return match === null ? undefined : (TCP_STATES[match[1] ?? ''] ?? match[1]);
  });
}

/** A pattern for an address as /proc/net/tcp* prints it (IPv4 in host byte order; IPv4-mapped in tcp6); any address when not IPv4. */
function hexAddress(address: string | undefined): string {
  if (address === undefined || !isIPv4(address)) return '[0-9A-F]+';
  const bytes = address.split('.').map((b) => Number(b).toString(16).toUpperCase().padStart(2, '0'));
  return `[0-9A-F]*${(endianness() === 'LE' ? bytes.reverse() : bytes).join('')}`;
}

/** Clock ticks per second of /proc times (USER_HZ: 100 on every mainstream Linux). */
const TICKS_PER_S = 100;

export interface CpuSnapshot {
  at: number;
  /** Busy ticks of all CPUs (user, nice, system, irq, softirq, steal). */
  busy: number;
  /** Ticks of this process and of its children that have been waited for (clusters, wrk, slowhttptest). */
  ours: number;
}

export function cpuSnapshot(): CpuSnapshot {
  const fields = (readProc('/proc/stat') ?? '').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  const self = readProc('/proc/self/stat') ?? '';
  const mine = self.slice(self.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14-17 (1-based); after the command name, indexes 11-14
  const ours = [11, 12, 13, 14].reduce((sum, i) => sum + Number(mine[i] ?? 0), 0);
  return { at: now(), busy: user + nice + system + irq + softirq + steal, ours };
}

/** The share of the machine (all CPUs) that processes other than ours used between two snapshots, in %. */
export function otherCpuPercent(a: CpuSnapshot, b: CpuSnapshot, cpus: number): number {
  const available = ((b.at - a.at) / 1000) * TICKS_PER_S * cpus;
  return available <= 0 ? Number.NaN : (Math.max(0, b.busy - a.busy - (b.ours - a.ours)) / available) * 100;
}

/**
 * The kernel's TCP memory in use (all namespaces), the level from which it is under memory pressure
 * (`tcp_mem[1]`) and its hard limit (`tcp_mem[2]`), in MB, from /proc/net/sockstat and /proc/sys.
 */
export function tcpMemoryMb(): { used: number; pressure: number; limit: number } {
  const pages = Number(/TCP:.* mem (\d+)/.exec(readProc('/proc/net/sockstat') ?? '')?.[1] ?? Number.NaN);
  const [, pressure = Number.NaN, limit = Number.NaN] = (readProc('/proc/sys/net/ipv4/tcp_mem') ?? '').trim().split(/\s+/).map(Number);
  const page = 4096 / 1024 / 1024;
  return { used: pages * page, pressure: pressure * page, limit: limit * page };
}
