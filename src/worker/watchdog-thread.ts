/**
 * The watchdog thread of a cluster worker (started by `watchdog.ts`). It runs
 * beside the worker's main thread and does two things the main thread cannot
 * do while its event loop is blocked:
 *
 * - **No orphans.** At each beat (a second by default) it compares `process.ppid`
 *   with the primary's pid. Once the primary is gone (killed with SIGKILL, say), the
 *   main thread normally sees the IPC channel close and shuts down gracefully;
 *   if the main thread is stuck (no beat for 4 beats), or its shutdown
 *   overruns the grace period, the watchdog SIGKILLs its own process.
 * - **Where is it stuck?** When the main thread misses its beat for
 *   `blockedLogMs`, the watchdog pauses it through the inspector (a V8
 *   interrupt, which a `while (true) {}` loop still honours), logs its
 *   JavaScript stack as one JSON line on stdout, and resumes it. The primary's
 *   heartbeat watchdog then decides whether the worker is replaced.
 *
 * It imports nothing of flotilla: it must start fast and stay small.
 */
import { writeSync } from 'node:fs';
import { Session } from 'node:inspector';
import { workerData } from 'node:worker_threads';
import type { WatchdogData } from './watchdog.ts';

const data = workerData as WatchdogData;
const beat = new Float64Array(data.beat);
/** As often as the main thread beats (see `beatInterval` in watchdog.ts). */
const CHECK_MS = data.beatMs;
/** A main thread without a beat for this long is stuck, not slow to react to the primary's exit. */
const STUCK_MS = 4 * data.beatMs;
const MAX_FRAMES = 20;
/** A log line stays under the pipe's atomic write size (4096 bytes on Linux). */
const MAX_LINE = 4000;

let orphanSince: number | undefined;
let stallLogged = false;

setInterval(() => {
  const now = Date.now();
  const silentMs = now - (beat[0] ?? now);
  if (process.ppid !== data.primaryPid) {
    orphanSince ??= now;
    if (silentMs > STUCK_MS || now - orphanSince > data.orphanGraceMs) process.kill(process.pid, 'SIGKILL');
  }
  if (silentMs < data.blockedLogMs) stallLogged = false;
  else if (!stallLogged) {
    stallLogged = true;
    logStack(silentMs);
  }
}, CHECK_MS);

function logStack(silentMs: number): void {
  const session = new Session();
  const scripts = new Map<string, string>();
  let done = false;
  const finish = (stack: string[] | undefined, error?: string) => {
    if (done) return;
    done = true;
    const line: Record<string, unknown> = {
      level: 'error',
      time: new Date().toISOString(),
      ...data.bindings,
      blockedMs: silentMs,
      stack: stack ?? [],
      ...(error === undefined ? {} : { stackError: error }),
      msg: 'event loop blocked: the JavaScript stack of the main thread',
    };
    let text = JSON.stringify(line);
    while (text.length > MAX_LINE && (line['stack'] as string[]).length > 1) {
      line['stack'] = (line['stack'] as string[]).slice(0, -1);
      text = JSON.stringify(line);
    }
    writeSafely(`${text}\n`);
    try {
      session.disconnect();
    } catch {}
  };
  try {
    session.connectToMainThread();
    session.on('Debugger.scriptParsed', (m) => scripts.set(m.params.scriptId, m.params.url));
    session.on('Debugger.paused', (m) => {
      const frames = m.params.callFrames.slice(0, MAX_FRAMES).map((f) => {
        const url = scripts.get(f.location.scriptId) || f.url || '<unknown>';
        return `${f.functionName || '<anonymous>'} (${url}:${f.location.lineNumber + 1}:${(f.location.columnNumber ?? 0) + 1})`;
      });
      session.post('Debugger.resume', () => session.post('Debugger.disable', () => finish(frames)));
    });
    session.post('Debugger.enable', (error) => {
      if (error !== null) return finish(undefined, error.message);
      session.post('Debugger.pause', (e) => {
        if (e !== null) finish(undefined, e.message);
      });
    });
    // the main thread may start beating again before it honours the pause: give up quietly
    setTimeout(() => finish(undefined, 'the main thread did not pause'), 2_000).unref();
  } catch (error) {
    finish(undefined, error instanceof Error ? error.message : String(error));
  }
}

function writeSafely(text: string): void {
  try {
    writeSync(1, text);
  } catch {}
}
