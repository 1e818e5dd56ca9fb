/**
 * The CPU count lives in `src/utils/cpus.ts`: the config validation uses it
 * too, and `src/config/` must not import the primary. Re-exported here for the
 * primary's own imports.
 */
export { availableCpus, type CpuOptions, cgroupCpuQuota, parseCpuMax, resolveWorkerCount } from '../utils/cpus.ts';
