import type { Worker } from 'node:cluster';

/**
 * The place of one worker in the cluster, kept across its restarts: its index
 * is the `worker` label of the per-worker metrics and the log lines' `slot`.
 * It holds the slot's current worker (a replacement that is starting, or an
 * old worker retiring, is not it) and that worker's state.
 */
export interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  /** Listening. */
  up: boolean;
  upSince: number;
  /** What the supervisor saw go wrong before the exit (`startup-timeout`, `uncaught-exception`, `boot-failure`). */
  failure: string | undefined;
  startupTimer: NodeJS.Timeout | undefined;
  restartTimer: NodeJS.Timeout | undefined;
}

/** `count` empty slots, indexed 0..count-1. */
export function emptySlots(count: number): Slot[] {
  return Array.from({ length: count }, (_, index) => ({
    index,
    worker: undefined,
    up: false,
    upSince: 0,
    failure: undefined,
    startupTimer: undefined,
    restartTimer: undefined,
  }));
}

/**
 * Grows or shrinks `slots` in place to `count`: new empty slots at the end, or the last ones removed
 * (their timers cleared; their workers are the caller's to retire).
 */
export function resizeSlots(slots: Slot[], count: number): { added: Slot[]; removed: Slot[] } {
  const removed = slots.splice(count);
  for (const slot of removed) {
    clearTimeout(slot.restartTimer);
    clearTimeout(slot.startupTimer);
  }
  const added = emptySlots(count).slice(slots.length);
  slots.push(...added);
  return { added, removed };
}
