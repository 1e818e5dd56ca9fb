/**
 * Computes for `ms` of the calling thread's CPU time and returns a value that
 * depends on the work (so that it cannot be optimized away). CPU time, not wall
 * time: a process descheduled meanwhile (2 workers, the primary and the load
 * generator sharing the CPUs) still does the whole work, as a real CPU-bound
 * handler would. The clock is read every ~20 µs of computing.
 */
export function burnCpu(ms: number): number {
  const cpu = typeof process.threadCpuUsage === 'function' ? () => process.threadCpuUsage() : () => process.cpuUsage();
  const start = cpu();
  const target = ms * 1000 + start.user + start.system;
  let x = 0x9e3779b9 | 0;
  for (;;) {
    for (let i = 0; i < 20_000; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
    }
    const used = cpu();
    if (used.user + used.system >= target) return x;
  }
}
