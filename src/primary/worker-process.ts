import cluster, { type Worker } from 'node:cluster';
import { msg } from '../ipc/protocol.ts';
import { WORKER_ENV } from '../process/worker-env.ts';

/** Time after a retiring worker's budget before it is killed. */
export const KILL_MARGIN_MS = 250;

export interface ForkHandlers {
  exit(code: number | null, signal: string | null): void;
  /** The process never started: a synchronous spawn error (E2BIG), or an `'error'` with no pid (EACCES, EAGAIN…), which no `'exit'` follows. */
  forkFailed(error: unknown): void;
  /** An error of a running worker's IPC channel. */
  channelError(error: Error): void;
}

/**
 * `cluster.fork` of a worker with its start-up data (`start`, in its environment), with the two ways a
 * fork fails (a throw, or an `'error'` event of a process that has no pid and will never exit) turned
 * into one `forkFailed` call. Returns the worker, or undefined when it threw.
 *
 * @example
 * const worker = forkWorker(start, { exit: onExit, forkFailed: retryLater, channelError: log });
 */
export function forkWorker(start: string, on: ForkHandlers): Worker | undefined {
  let worker: Worker;
  try {
    worker = cluster.fork({ [WORKER_ENV]: start });
  } catch (error) {
    on.forkFailed(error);
    return undefined;
  }
  return handled(worker, on);
}

/**
 * Takes the worker forked before the config was read (early-worker.ts) as {@link forkWorker} would
 * have forked it: the same handlers, and its start-up data in `flotilla:start`.
 */
export function adoptWorker(worker: Worker, start: string, on: ForkHandlers): Worker {
  handled(worker, on).send(msg.start(start));
  return worker;
}

function handled(worker: Worker, on: ForkHandlers): Worker {
  worker.once('exit', (code, signal) => on.exit(code, signal));
  worker.on('error', (error) => (worker.process.pid === undefined ? on.forkFailed(error) : on.channelError(error)));
  return worker;
}

/**
 * Workers awaited until they listen. The primary's one dispatcher of worker messages tells it of each
 * `flotilla:listening` (`listening`, through `Supervisor.listening`); `untilListening` resolves `true`
 * then, `false` if the worker exits, was never started, or `timeoutMs` passes first.
 *
 * @example
 * const listens = new ListeningWaits(); // and in the dispatcher: 'flotilla:listening': (m, worker) => listens.listening(worker)
 * if (!(await listens.untilListening(fresh, 10_000))) fresh.process.kill('SIGKILL');
 */
export class ListeningWaits {
  readonly #waiting = new Map<Worker, Set<(ok: boolean) => void>>();

  /** `worker` said it listens: whoever awaits it gets `true`. */
  listening(worker: Worker): void {
    for (const done of this.#waiting.get(worker) ?? []) done(true);
  }

  untilListening(worker: Worker, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        const waits = this.#waiting.get(worker);
        waits?.delete(done);
        if (waits?.size === 0) this.#waiting.delete(worker);
        worker.off('exit', gone).off('error', onError);
        resolve(ok);
      };
      const gone = () => done(false);
      const onError = () => {
        if (worker.process.pid === undefined) done(false);
      };
      const timer = setTimeout(gone, timeoutMs);
      const waits = this.#waiting.get(worker) ?? new Set();
      this.#waiting.set(worker, waits.add(done));
      worker.once('exit', gone).on('error', onError);
    });
  }
}

/**
 * Relays the shutdown (its budget ends at `deadline`, epoch ms; `retire`: this
 * worker alone leaves, see `ShutdownMessage`); a worker that cannot be told is
 * killed, and false is returned.
 */
export function sendShutdown(worker: Worker, deadline: number, retire = false): boolean {
  try {
    worker.send(msg.shutdown(deadline, retire));
    return true;
  } catch {
    worker.process.kill('SIGKILL');
    return false;
  }
}

/** Shuts one worker down gracefully; SIGKILL once its budget (plus a margin) is spent. Resolves at its exit. */
export async function retireWorker(worker: Worker, budgetMs: number): Promise<void> {
  if (worker.isDead()) return;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  sendShutdown(worker, Date.now() + budgetMs, true);
  const timer = setTimeout(() => worker.process.kill('SIGKILL'), budgetMs + KILL_MARGIN_MS);
  await exited;
  clearTimeout(timer);
}
