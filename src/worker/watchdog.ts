import { Worker } from 'node:worker_threads';
import { entryPoint } from '../entry-points.ts';

/** What the watchdog thread needs; see `watchdog-thread.ts`. */
export interface WatchdogData {
  /** The main thread's last beat (epoch ms), written by the main thread, read by the watchdog. */
  beat: SharedArrayBuffer;
  /** The primary's pid: once `process.ppid` differs, the primary is gone. */
  primaryPid: number;
  /** A main thread silent this long gets its JavaScript stack logged (once per stall). */
  blockedLogMs: number;
  /** Primary gone and the main thread still alive after this long (its graceful shutdown overran): SIGKILL. */
  orphanGraceMs: number;
  /** The fields of the worker's log lines (`service`, `pid`, `worker`). */
  bindings: Record<string, unknown>;
  /** The beat's period (see `beatInterval`). */
  beatMs: number;
}

/**
 * How often the main thread writes its beat and the watchdog thread looks at it: a quarter of
 * `blockedLogMs`, between 250 ms and a second. With the default heartbeat timeout (10 s, so
 * `blockedLogMs` 5 s) once a second each: an idle worker wakes twice a second for its watchdog.
 */
export function beatInterval(blockedLogMs: number): number {
  return Math.min(1_000, Math.max(250, Math.floor(blockedLogMs / 4)));
}

/**
 * Starts the worker's watchdog thread (see `watchdog-thread.ts`) and returns the
 * main thread's beat it reads: the caller calls it at least every
 * `beatInterval(blockedLogMs)` (the worker's one periodic timer, see
 * `worker-main.ts`, so an idle worker wakes once a period, not once per
 * duty). The thread is what ends a worker whose main thread is stuck once the
 * primary is gone, so that no orphan survives the primary's `kill -9`; it also
 * logs where a blocked main thread is stuck.
 *
 * @example
 * const beat = startWatchdog({ primaryPid: process.ppid, blockedLogMs: 5_000, orphanGraceMs: 12_000, bindings }, (err) => log.error({ err }));
 * setInterval(beat, beatInterval(5_000)).unref();
 */
export function startWatchdog(options: Omit<WatchdogData, 'beat' | 'beatMs'>, onError: (error: Error) => void): () => void {
  const beat = new SharedArrayBuffer(8);
  const cell = new Float64Array(beat);
  cell[0] = Date.now();
  const beatMs = beatInterval(options.blockedLogMs);
  const data: WatchdogData = { ...options, beat, beatMs };
  const thread = new Worker(entryPoint('worker/watchdog-thread'), {
    workerData: data,
    // a few timers and, once per stall, an inspector session; the old generation must also hold Node's
    // type stripping when it loads the .ts source with a cold compile cache (8 MB was not enough).
    // A small young generation, code range and stack keep its idle RSS near 9 MB, not 14.
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 1, codeRangeSizeMb: 2, stackSizeMb: 1 },
    stdout: false,
    stderr: false,
  });
  // the watchdog never keeps the worker alive, and a failure of it must not take the worker down (only be said)
  thread.unref();
  thread.on('error', onError);
  return () => {
    cell[0] = Date.now();
  };
}
