import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { type CgroupOptions, cgroupDirectories, readCgroupFile } from './cgroup.ts';

/** Where to look for the cgroup CPU quota; the defaults are the real system's. */
export interface CpuOptions extends CgroupOptions {
  /** CPUs the scheduler lets this process use. Default `os.availableParallelism()`. */
  parallelism?: number;
}

/**
 * The number of CPUs this process may use: `os.availableParallelism()` capped
 * by the cgroup CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us`), the tightest
 * quota from the process's cgroup up to the root applying. A fractional quota
 * is rounded **down** (at least 1): with Kubernetes `cpu: 1500m` this gives 1,
 * so workers never outnumber the CPU time they are granted and get throttled;
 * the remainder serves the primary and libuv's threads. Never throws: anything
 * unreadable means "no quota". Shared: the primary sizes `workers: auto` with
 * it, the config validation refuses a `workers` far above it.
 *
 * @example
 * availableCpus(); // 2 in a container limited to `cpus: 2.5` on a 16-core host
 */
export function availableCpus(opts: CpuOptions = {}): number {
  const given = opts.parallelism ?? availableParallelism();
  const parallelism = Math.max(1, Math.floor(Number.isFinite(given) ? given : availableParallelism()));
  const quota = cgroupCpuQuota(opts);
  return quota === undefined ? parallelism : Math.min(parallelism, Math.max(1, Math.floor(quota)));
}

/**
 * `workers` from the config as a count: a number as is, `auto` as `cpus`.
 *
 * @example
 * resolveWorkerCount('auto'); // availableCpus()
 * resolveWorkerCount(3);      // 3
 */
export function resolveWorkerCount(workers: number | 'auto', cpus: number = availableCpus()): number {
  return Math.max(1, Math.floor(workers === 'auto' ? cpus : workers));
}

/**
 * Parses a cgroup v2 `cpu.max` (`"<quota|max> <period>"`) into CPUs, possibly
 * fractional; `undefined` when unlimited (`max`) or malformed.
 *
 * @example
 * parseCpuMax('150000 100000\n'); // 1.5
 * parseCpuMax('max 100000');      // undefined
 */
export function parseCpuMax(text: string): number | undefined {
  const match = /^(max|\d+) (\d+)$/.exec(text.trim());
  if (match === null || match[1] === 'max') return undefined;
  return cpus(Number(match[1]), Number(match[2]));
}

/**
 * The tightest CPU quota on the process's cgroup and its ancestors, in CPUs
 * (possibly fractional); `undefined` when there is none or it cannot be read.
 *
 * @example
 * cgroupCpuQuota(); // 1.5 under `docker run --cpus 1.5`
 */
export function cgroupCpuQuota(opts: CgroupOptions = {}): number | undefined {
  const quotas: number[] = [];
  for (const { version, dir } of cgroupDirectories('cpu', opts)) {
    const quota = version === 2 ? parseCpuMax(readCgroupFile(join(dir, 'cpu.max')) ?? '') : v1Quota(dir);
    if (quota !== undefined) quotas.push(quota);
  }
  return quotas.length === 0 ? undefined : Math.min(...quotas);
}

/** cgroup v1: `cpu.cfs_quota_us` (`-1` = unlimited) over `cpu.cfs_period_us`. */
function v1Quota(dir: string): number | undefined {
  const quota = readCgroupFile(join(dir, 'cpu.cfs_quota_us'))?.trim() ?? '';
  const period = readCgroupFile(join(dir, 'cpu.cfs_period_us'))?.trim() ?? '';
  if (!/^\d+$/.test(quota) || !/^\d+$/.test(period)) return undefined;
  return cpus(Number(quota), Number(period));
}

function cpus(quota: number, period: number): number | undefined {
  return quota > 0 && period > 0 && Number.isSafeInteger(quota) && Number.isSafeInteger(period) ? quota / period : undefined;
}
