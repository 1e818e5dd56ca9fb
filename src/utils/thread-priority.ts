import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the CPU priority of the calling thread (its nice value raised to `nice`, never lowered:
 * raising a priority back takes a privilege a container seldom has). Linux alone schedules threads
 * by their own nice value (`/proc/thread-self` names the thread); elsewhere, and when the system
 * refuses, nothing changes. Returns whether the thread now runs at `nice` or lower priority.
 *
 * @example
 * lowerThreadPriority(10); // this worker thread yields the CPU to the process's other threads and to the workers
 */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid)) return false;
    if (getPriority(tid) < nice) setPriority(tid, nice);
    return getPriority(tid) >= nice;
  } catch {
    return false;
  }
}
