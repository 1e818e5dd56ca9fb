import { ORIGIN } from '../services/data.ts';
import type { Scenario } from './contenders.ts';
import { cpuTimes, treeCpuSeconds } from './proc.ts';
import type { ServerProcess } from './server-process.ts';
import { runWrk } from './wrk.ts';

export interface LoadSettings {
  connections: number;
  durationS: number;
  /** Core wrk is pinned to, if any. */
  wrkCore: number | undefined;
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
  /** Socket errors, timeouts and non-2xx/3xx responses: should be 0. */
  errors: number;
  /** CPU time of every other process (and hypervisor steal) on the machine, in % of one core over the run: noise. */
  foreignPct: number;
}

/** Loads `server` with wrk for `durationS` and reads the CPU its processes used meanwhile. */
export async function loadRun(server: ServerProcess, scenario: Scenario, s: LoadSettings): Promise<Omit<Run, 'contender' | 'round'>> {
  const machineBefore = cpuTimes().get('cpu');
  const before = treeCpuSeconds(server.pid);
  const wrk = await runWrk({
    port: server.port,
    path: scenario.path,
    ...(scenario.idCount === undefined ? {} : { idCount: scenario.idCount }),
    connections: s.connections,
    durationS: s.durationS,
    headers: { Origin: ORIGIN, Accept: 'application/json' },
    ...(s.wrkCore === undefined ? {} : { core: s.wrkCore }),
  });
  const cpuS = treeCpuSeconds(server.pid) - before;
  const machineAfter = cpuTimes().get('cpu');
  const machineS = machineBefore && machineAfter ? machineAfter.busy - machineBefore.busy + machineAfter.steal - machineBefore.steal : 0;
  const foreignS = machineS - cpuS - wrk.cpuS;
  const e = wrk.errors;
  return {
    scenario: scenario.name,
    requests: wrk.requests,
    rps: wrk.rps,
    p50Ms: wrk.latencyMs.p50,
    p99Ms: wrk.latencyMs.p99,
    cpuS,
    cpuPer1k: (cpuS / Math.max(1, wrk.requests)) * 1000,
    errors: e.connect + e.read + e.write + e.status + e.timeout,
    foreignPct: Math.max(0, (foreignS / wrk.durationS) * 100),
  };
}
