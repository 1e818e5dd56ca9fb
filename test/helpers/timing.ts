/**
 * CPU time (user + system, every thread of this process) spent while `work`
 * runs, in ms. Unlike wall time it hardly moves when other processes compete
 * for the CPU, so bounds on it hold on a busy machine.
 */
export async function cpuMs(work: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
}
