/**
 * Entry of the primary's service thread (`service-thread-main.ts` is the thread itself): lowers the
 * thread's CPU priority before anything is loaded, then loads it. The thread loads the service (some
 * 200 ms of CPU) just as a cluster that has come up takes its first load, and its cron jobs may compute
 * for seconds: at a lower priority it gets the CPU the workers and the primary's main thread (the
 * connections' hand-off) leave, so neither costs a request its latency
 * (reliability/results/after-handoff.md). Not lower still: it answers heartbeats within
 * `cluster.heartbeatTimeoutMs` on a busy machine.
 */
import { entryPoint } from '../entry-points.ts';
import { lowerThreadPriority } from '../utils/thread-priority.ts';

/** The thread's nice value (the workers and the primary's main thread run at the process's, 0 by default). */
const NICE = 10;

lowerThreadPriority(NICE);
await import(entryPoint('primary/service-thread-main').href);
