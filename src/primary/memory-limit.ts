import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { type CgroupOptions, cgroupDirectories, readCgroupFile } from '../utils/cgroup.ts';

const MiB = 1_048_576;

/**
 * Share of the memory limit kept for what is not V8's old space, in every
 * process: code, the young generation, `Buffer`s and other native memory.
 */
export const NON_HEAP_RESERVE = 0.25;
/** What the primary is counted for (it holds no request data: the config, the supervisor, the metrics of its own), in MiB. */
export const PRIMARY_ALLOWANCE_MB = 64;
/** The smallest heap a worker is given, in MiB: below it a worker spends its time collecting garbage. */
export const MIN_WORKER_HEAP_MB = 64;

/** A limit at or above this many bytes means "unlimited" (cgroup v1 writes 2^63 rounded down to a page). */
const UNLIMITED_BYTES = 2 ** 62;

/**
 * Parses a cgroup memory limit file into bytes: v2 `memory.max` (`max` =
 * unlimited) or v1 `memory.limit_in_bytes` (a huge number such as
 * 9223372036854771712 = unlimited); `undefined` when unlimited, zero or
 * malformed.
 *
 * @example
 * parseMemoryLimit('536870912\n');          // 536870912 (512 MiB)
 * parseMemoryLimit('max\n');                // undefined
 * parseMemoryLimit('9223372036854771712'); // undefined
 */
export function parseMemoryLimit(text: string): number | undefined {
  const value = text.trim();
  if (!/^\d+$/.test(value)) return undefined;
  const bytes = Number(value);
  return bytes > 0 && bytes < UNLIMITED_BYTES ? bytes : undefined;
}

/**
 * The container's memory limit in bytes: the tightest of the cgroup v2
 * `memory.max` or v1 `memory.limit_in_bytes` on the process's cgroup (found
 * through `/proc/self/cgroup`, as for the CPU quota) and its ancestors up to
 * `cgroupRoot` (default `/sys/fs/cgroup`). `undefined` when there is no limit
 * or it cannot be read; never throws.
 *
 * @example
 * cgroupMemoryLimit(); // 536870912 under `docker run --memory 512m`, undefined on a host
 * cgroupMemoryLimit({ cgroupRoot: '/tmp/cgroup', procCgroupFile: '/tmp/cgroup/self' });
 */
export function cgroupMemoryLimit(opts: CgroupOptions = {}): number | undefined {
  let tightest: number | undefined;
  for (const { version, dir } of cgroupDirectories('memory', opts)) {
    const limit = parseMemoryLimit(readCgroupFile(join(dir, version === 2 ? 'memory.max' : 'memory.limit_in_bytes')) ?? '');
    if (limit !== undefined && (tightest === undefined || limit < tightest)) tightest = limit;
  }
  return tightest;
}

/**
 * Each worker's share of a memory limit as a V8 old-space size, in MiB (the
 * value of `--max-old-space-size`). A quarter of the limit is kept for memory
 * outside the old space — each process's code, young generation, buffers and
 * native allocations —, the primary is counted as one more process with a
 * fixed 64 MiB, and the rest is split evenly:
 *
 *   share = floor((0.75 × limit − 64 MiB) / workers)
 *
 * so that N full worker heaps, their non-heap memory and the primary fit
 * inside the limit. The share is at least 64 MiB (with too many workers for
 * the limit, lower `workers` rather than starve them) and at most
 * `nodeDefaultMB`, the heap Node would give a process itself.
 *
 * @example
 * workerHeapShareMB(512 * 1024 ** 2, 2);   // 160: (384 − 64) / 2
 * workerHeapShareMB(2 * 1024 ** 3, 4);     // 368: (1536 − 64) / 4
 * workerHeapShareMB(256 * 1024 ** 2, 4);   // 64: the floor
 */
export function workerHeapShareMB(limitBytes: number, workers: number, nodeDefaultMB = Number.POSITIVE_INFINITY): number {
  const budgetMB = (limitBytes / MiB) * (1 - NON_HEAP_RESERVE) - PRIMARY_ALLOWANCE_MB;
  const share = Math.floor(budgetMB / Math.max(1, Math.floor(workers)));
  return Math.min(Math.floor(nodeDefaultMB), Math.max(MIN_WORKER_HEAP_MB, Number.isFinite(share) ? share : MIN_WORKER_HEAP_MB));
}

/** What `workerHeapArgs` decides from. */
export interface WorkerHeapInput {
  /** The primary's `process.execArgv` (node:cluster passes it on to the workers). */
  execArgv: readonly string[];
  /** `NODE_OPTIONS` (the workers inherit the environment). */
  nodeOptions: string | undefined;
  /** The memory limit in bytes (`cgroupMemoryLimit()`); `undefined` when unlimited. */
  limitBytes: number | undefined;
  /** The number of workers. */
  workers: number;
  /** The heap Node picks for a process itself, in MiB. Default: this process's `v8.getHeapStatistics().heap_size_limit`. */
  nodeDefaultMB?: number;
}

/** `--max-old-space-size` and the other V8 flags that set the heap size, with `-` or `_` between words. */
const HEAP_SIZE_FLAG = /^--max[-_](?:old[-_]space[-_]size|heap[-_]size)(?:=|$)/;

/**
 * The extra `execArgv` of each worker: `['--max-old-space-size=<MB>']` with
 * its share of the memory limit (`workerHeapShareMB`), or `[]` when there is
 * no limit, when the user already chose a heap size (`--max-old-space-size`,
 * `--max_old_space_size` or `--max-heap-size` in `execArgv` or
 * `NODE_OPTIONS`), or when the share is not below the heap Node would pick
 * itself. Without it, every worker would size its heap as if it were alone in
 * the container, and N of them would be OOM-killed together.
 *
 * @example
 * workerHeapArgs({ execArgv: [], nodeOptions: undefined, limitBytes: 512 * 1024 ** 2, workers: 2 }); // ['--max-old-space-size=160']
 * workerHeapArgs({ execArgv: ['--max-old-space-size=300'], nodeOptions: '', limitBytes: 512 * 1024 ** 2, workers: 2 }); // []
 */
export function workerHeapArgs(input: WorkerHeapInput): string[] {
  const { execArgv, nodeOptions, limitBytes, workers } = input;
  if (limitBytes === undefined || !(limitBytes > 0)) return [];
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  if (given.some((arg) => HEAP_SIZE_FLAG.test(arg))) return [];
  const nodeDefaultMB = input.nodeDefaultMB ?? getHeapStatistics().heap_size_limit / MiB;
  const share = workerHeapShareMB(limitBytes, workers, nodeDefaultMB);
  return share < Math.floor(nodeDefaultMB) ? [`--max-old-space-size=${share}`] : [];
}

/**
 * {@link workerHeapArgs} for this process: its `execArgv`, `NODE_OPTIONS` and container memory
 * limit, for `workers` workers (the primary's, and the early worker's guess, early-worker.ts).
 */
export function heapArgsFor(workers: number): string[] {
  return workerHeapArgs({ execArgv: process.execArgv, nodeOptions: process.env['NODE_OPTIONS'], limitBytes: cgroupMemoryLimit(), workers });
}
