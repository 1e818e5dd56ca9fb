import { ORIGIN } from '../services/data.ts';
import type { Scenario } from './contenders.ts';
import { CLK_TCK, connectionsOf, cpuTicks, cpuTimes, processTree, threadStats } from './proc.ts';
import type { ServerProcess } from './server-process.ts';
import { runWrk } from './wrk.ts';

export interface LoadSettings {
  connections: number;
  durationS: number;
  /** Core wrk is pinned to, if any. */
  wrkCore: number | undefined;
  /**
   * A server that is one process with worker threads (Watt): the names (`comm`) of its worker
   * threads, to split its CPU between them and the rest of the process (`split`).
   */
  workerThreads?: RegExp;
}

/** One measured run of one contender on one scenario. */
export interface Run {
  contender: string;
  scenario: string;
  /** 0 is the warm-up round (not reported). */
  round: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU-seconds (utime + stime of every server process) during the run. */
  cpuS: number;
  /** Server CPU-seconds per 1 000 requests. */
  cpuPer1k: number;
  /**
   * A cluster's CPU-seconds split by process: `primary` (the process started)
   * and `workers` (its children, in pid order); absent for a single process,
   * unless `workerThreads` names its worker threads: then `workers` are those
   * threads (in tid order) and `primary` the rest of the process.
   * `connections`: in keep-alive scenarios, the established connections each
   * worker process held halfway through the run (same order).
   */
  split?: { primary: number; workers: number[]; connections?: number[] };
  /** Socket errors, timeouts and non-2xx/3xx responses: should be 0. */
  errors: number;
  /** Of `errors`, the responses with a status of 400 or more (wrk's `status` errors; the routes never redirect, so: every non-2xx). */
  non2xx: number;
  /** CPU time of every other process (and hypervisor steal) on the machine, in % of one core over the run: noise. */
  foreignPct: number;
}

/** CPU ticks so far of a server's process and each of its descendants (cluster workers), by pid. */
function ticksByPid(pid: number): Map<number, number> {
  return new Map(processTree(pid).map((p) => [p, cpuTicks(p)]));
}

/** CPU ticks so far of each thread of `pid` whose name matches `names`, by tid. */
function threadTicks(pid: number, names: RegExp): Map<number, number> {
  return new Map(threadStats(pid).flatMap((t) => (names.test(t.comm) ? [[t.tid, t.ticks] as const] : [])));
}

/** Loads `server` with wrk for `durationS` and reads the CPU its processes used meanwhile. */
export async function loadRun(server: ServerProcess, scenario: Scenario, s: LoadSettings): Promise<Omit<Run, 'contender' | 'round'>> {
  const machineBefore = cpuTimes().get('cpu');
  const before = ticksByPid(server.pid);
  const threadsBefore = s.workerThreads === undefined ? undefined : threadTicks(server.pid, s.workerThreads);
  // halfway through a keep-alive run, which worker holds which of wrk's connections (a cluster's spread)
  let connections: number[] | undefined;
  const workers = () =>
    processTree(server.pid)
      .slice(1)
      .sort((a, b) => a - b);
  const sample =
    scenario.keepAlive && before.size > 1
      ? setTimeout(() => (connections = connectionsOf(workers(), server.port)), s.durationS * 500)
      : undefined;
  const wrk = await runWrk({
    port: server.port,
    path: scenario.path,
    ...(scenario.idCount === undefined ? {} : { idCount: scenario.idCount }),
    ...(scenario.body === undefined ? {} : { body: scenario.body }),
    connections: s.connections,
    durationS: s.durationS,
    headers: { Origin: ORIGIN, Accept: 'application/json', ...scenario.headers },
    ...(s.wrkCore === undefined ? {} : { core: s.wrkCore }),
  });
  clearTimeout(sample);
  const after = ticksByPid(server.pid);
  const threadsAfter = s.workerThreads === undefined ? undefined : threadTicks(server.pid, s.workerThreads);
  // a process that appeared during the run counts from 0; one that exited is lost (a worker replaced mid-run)
  const used = [...after].map(([pid, ticks]) => ({ pid, s: (ticks - (before.get(pid) ?? 0)) / CLK_TCK }));
  const cpuS = used.reduce((sum, p) => sum + p.s, 0);
  const children = used.filter((p) => p.pid !== server.pid).sort((a, b) => a.pid - b.pid);
  const machineAfter = cpuTimes().get('cpu');
  const machineS = machineBefore && machineAfter ? machineAfter.busy - machineBefore.busy + machineAfter.steal - machineBefore.steal : 0;
  const foreignS = machineS - cpuS - wrk.cpuS;
  const e = wrk.errors;
  const split = {
    primary: used.find((p) => p.pid === server.pid)?.s ?? 0,
    workers: children.map((p) => p.s),
    ...(connections === undefined ? {} : { connections }),
  };
  // one process with worker threads: the threads are the workers, the rest of the process the primary
  if (children.length === 0 && threadsBefore !== undefined && threadsAfter !== undefined && threadsAfter.size > 0) {
    split.workers = [...threadsAfter].sort(([a], [b]) => a - b).map(([tid, ticks]) => (ticks - (threadsBefore.get(tid) ?? 0)) / CLK_TCK);
    split.primary -= split.workers.reduce((sum, w) => sum + w, 0);
  }
  return {
    scenario: scenario.name,
    requests: wrk.requests,
    rps: wrk.rps,
    p50Ms: wrk.latencyMs.p50,
    p99Ms: wrk.latencyMs.p99,
    cpuS,
    cpuPer1k: (cpuS / Math.max(1, wrk.requests)) * 1000,
    ...(split.workers.length === 0 ? {} : { split }),
    errors: e.connect + e.read + e.write + e.status + e.timeout,
    non2xx: e.status,
    foreignPct: Math.max(0, (foreignS / wrk.durationS) * 100),
  };
}
