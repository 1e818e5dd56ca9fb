import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Link } from './netns.ts';
import { type SlowKind, type SlowResult, type SlowTarget, slowClients } from './sockets.ts';

interface Job {
  target: SlowTarget;
  kind: SlowKind;
  count: number;
  tickMs: number;
  maxMs: number;
  staggerMs: number;
}

/**
 * `slowClients` (lib/sockets.ts) in a child process on the clients' side of
 * `link`. Over a veth pair the child runs inside the clients' network
 * namespace (`ip netns exec`): from this namespace the server's address is a
 * local one, and the kernel would route them over `lo` whatever the address.
 * The child reads the server's side of each socket from this process's
 * namespace (`/proc/<pid>/net`). Over loopback too they run in a child:
 * watching them reads all of /proc/net/tcp once a second, which blocks an
 * event loop for tens to hundreds of milliseconds on a busy machine, and the
 * probe runs in this one.
 */
export async function slowClientsOver(
  link: Link,
  port: number,
  kind: SlowKind,
  count: number,
  tickMs: number,
  maxMs: number,
  staggerMs: number,
): Promise<SlowResult[]> {
  const job: Job = {
    target: { host: link.serverHost, port, serverNet: `/proc/${process.pid}/net` },
    kind,
    count,
    tickMs,
    maxMs,
    staggerMs,
  };
  const [command = process.execPath, ...args] = [
    ...link.clientPrefix,
    process.execPath,
    fileURLToPath(import.meta.url),
    JSON.stringify(job),
  ];
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
  });
  if (code !== 0) throw new Error(`the slow clients' process failed (exit ${code}):\n${stderr.slice(-1500)}`);
  return JSON.parse(stdout) as SlowResult[];
}

// the child: runs the job given as its argument, writes the results as JSON
if (import.meta.main) {
  const job = JSON.parse(process.argv[2] ?? '{}') as Job;
  const results = await slowClients(job.target, job.kind, job.count, job.tickMs, job.maxMs, job.staggerMs);
  process.stdout.write(JSON.stringify(results));
}
