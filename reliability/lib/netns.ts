import { execFileSync } from 'node:child_process';
import { isAlive } from '../../tools/proc.ts';

/**
 * Where the slow clients' side of the traffic runs. Over `lo` (MTU 65536) Linux
 * sizes a socket's send buffer from a ~64 kB MSS and autotunes it to
 * tcp_wmem[2] (4 MiB) at once; over an Ethernet MTU it starts near 70 kB. A
 * veth pair into a network namespace gives the clients a 1500-byte link, as a
 * real network would.
 */
export interface Link {
  kind: 'veth' | 'loopback';
  /** The address the cluster binds to and the clients connect to. */
  serverHost: string;
  /** The clients' address. */
  clientHost: string;
  /** Prepended to a client's command line to run it on the far side of the link (`ip netns exec <ns>`); empty for loopback. */
  clientPrefix: readonly string[];
  /** For the report, e.g. `a veth pair with MTU 1500 (…)`; for loopback, why it is loopback. */
  description: string;
  /** Removes the namespace and the veth pair (harmless when already gone). */
  close(): void;
}

export const MTU = 1500;
const PREFIX = 'flotilla-reliability-';

/** Loopback: the clients run beside the server on 127.0.0.1. */
export function loopbackLink(why: string): Link {
  return {
    kind: 'loopback',
    serverHost: '127.0.0.1',
    clientHost: '127.0.0.1',
    clientPrefix: [],
    description: `loopback (${why})`,
    close() {},
  };
}

/**
 * A network namespace `flotilla-reliability-<pid>` joined to this one by a veth
 * pair with MTU 1500 on a /30 derived from the pid (10.77.x.y): the server's
 * end here, the clients' end in the namespace. Removed by `close()` and, in any
 * case, when the process exits (Ctrl-C included); namespaces left by a killed
 * run are removed first. Falls back to loopback, saying why, when not root or
 * when `ip` fails.
 */
export function openLink(): Link {
  if (process.getuid?.() !== 0) return loopbackLink('not root: no network namespace');
  const ns = `${PREFIX}${process.pid}`;
  // interface names: at most 15 characters
  const serverIf = `flr${process.pid}s`;
  const clientIf = `flr${process.pid}c`;
  const index = process.pid % 16_384;
  const address = (host: number) => `10.77.${index >> 6}.${((index & 63) << 2) + host}`;
  const serverHost = address(1);
  const clientHost = address(2);
  const close = () => {
    for (const pid of ipLines(['netns', 'pids', ns])) killQuietly(Number(pid));
    ipQuietly(['link', 'del', serverIf]);
    ipQuietly(['netns', 'del', ns]);
  };
  try {
    removeStale();
    ip(['netns', 'add', ns]);
    process.once('exit', close);
    ip(['link', 'add', serverIf, 'mtu', String(MTU), 'type', 'veth', 'peer', 'name', clientIf, 'mtu', String(MTU), 'netns', ns]);
    ip(['addr', 'add', `${serverHost}/30`, 'dev', serverIf]);
    ip(['link', 'set', serverIf, 'up']);
    ip(['-n', ns, 'addr', 'add', `${clientHost}/30`, 'dev', clientIf]);
    ip(['-n', ns, 'link', 'set', clientIf, 'up']);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    close();
    process.off('exit', close);
    const { stderr, message } = error as Error & { stderr?: string };
    return loopbackLink(`ip netns failed: ${(stderr?.trim() || message).split('\n')[0]}`);
  }
  return {
    kind: 'veth',
    serverHost,
    clientPrefix: ['ip', 'netns', 'exec', ns],
    clientHost,
    description: `a veth pair with MTU ${MTU} (the cluster on the host's end, slowhttptest and our slow clients in a network namespace)`,
    close() {
      close();
      process.off('exit', close);
    },
  };
}

/** Namespaces of earlier runs whose process is gone (SIGKILLed: no exit handler ran). */
function removeStale(): void {
  for (const line of ipLines(['netns', 'list'])) {
    const name = line.split(' ')[0] ?? '';
    const pid = Number(name.slice(PREFIX.length));
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && !isAlive(pid)) {
      for (const p of ipLines(['netns', 'pids', name])) killQuietly(Number(p));
      ipQuietly(['netns', 'del', name]);
    }
  }
}

function ip(args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function ipQuietly(args: string[]): void {
  try {
    ip(args);
  } catch {
    // already gone
  }
}

function ipLines(args: string[]): string[] {
  try {
    return ip(args)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  } catch {
    return [];
  }
}

function killQuietly(pid: number): void {
  try {
    if (pid > 0) process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
