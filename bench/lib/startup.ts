import { Agent } from 'node:http';
import { get } from './http.ts';
import { processTree, rssMb, waitQuiet } from './proc.ts';
import { freePort, type Launch, ServerProcess } from './server-process.ts';
import { median } from './stats.ts';

export const CLUSTER: Launch = { entry: 'servers/flotilla-cluster.yaml', readyLines: 2, env: { WORKERS: '2' } };
export const STANDALONE: Launch = { entry: 'servers/flotilla-full.ts', readyLines: 1 };

/** Starts a launch on fresh ports (the cluster's metrics port included). */
export async function startFresh(launch: Launch): Promise<ServerProcess> {
  const port = await freePort();
  return ServerProcess.start(launch, port, { METRICS_PORT: String(await freePort()) });
}

export interface ColdStart {
  /** Spawn → the last `ready` line (the last worker listening), per run. */
  runsMs: number[];
  medianMs: number;
  maxMs: number;
  /** Exit time after SIGTERM with no connection open, per run. */
  exitMs: number[];
}

/** Starts `launch` `runs` times, unpinned, and times spawn → every process listening, then SIGTERM → exit. */
export async function coldStarts(launch: Launch, runs: number): Promise<ColdStart> {
  const runsMs: number[] = [];
  const exitMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    await waitQuiet(5);
    const server = await startFresh(launch);
    runsMs.push(Math.max(...server.readyMs));
    // the port answers on fresh connections (the cluster's primary hands them to the workers)
    for (let n = 0; n < 4; n++) await get(server.port, '/items/1');
    exitMs.push(await server.stop());
  }
  return { runsMs, medianMs: median(runsMs), maxMs: Math.max(...runsMs), exitMs };
}

export interface ExitTime {
  connections: number;
  /** SIGTERM → the (primary) process exited. */
  exitMs: number;
  code: number | null;
}

/** Opens `connections` keep-alive connections (one request each, then idle), sends SIGTERM, and times the exit. */
export async function exitWithIdleConnections(launch: Launch, connections = 100): Promise<ExitTime> {
  const server = await startFresh(launch);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  await Promise.all(Array.from({ length: connections }, () => get(server.port, '/items/1', {}, agent)));
  const idle = Object.values(agent.freeSockets).flat().length;
  const exitMs = await server.stop();
  const { code } = await server.exited;
  agent.destroy();
  return { connections: idle, exitMs, code };
}

export interface ProcessRss {
  pid: number;
  role: 'process' | 'primary' | 'worker';
  /** VmRSS, MB. */
  mb: number;
  /** RssAnon (private), MB. */
  anonMb: number;
}

/** VmRSS of every process of a server (the primary and its workers for the cluster). */
export function rssOf(server: ServerProcess): ProcessRss[] {
  const tree = processTree(server.pid);
  return tree.flatMap((pid, i) => {
    const mem = rssMb(pid);
    if (mem === undefined) return [];
    const role = tree.length === 1 ? 'process' : i === 0 ? 'primary' : 'worker';
    return [{ pid, role, mb: Math.round(mem.rss * 10) / 10, anonMb: Math.round(mem.anon * 10) / 10 }];
  });
}
