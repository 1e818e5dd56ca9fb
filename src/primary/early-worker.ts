import cluster, { type Worker } from 'node:cluster';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { entryPoint } from '../entry-points.ts';
import { EARLY_WORKER_ENV, LOAD_AHEAD } from '../process/worker-env.ts';
import { availableCpus } from '../utils/cpus.ts';
import { heapArgsFor } from './memory-limit.ts';

/** The early worker and the heap flags it was started with. */
let early: { worker: Worker; heapArgs: readonly string[] } | undefined;

/**
 * Forks the first worker of `flotilla start` before the primary reads its config: Node's start of
 * that process (some 40 ms of CPU) runs on the other core while the primary loads its modules and
 * validates the config, which a cold start waited for with a core idle (bench/results/footprint-*.md).
 * The worker waits for its start-up data in `flotilla:start`, sent when the supervisor takes it
 * for its first slot ({@link takeEarlyWorker}); a primary that never takes it (a config error) kills
 * it ({@link dropEarlyWorker}), and so does its exit. It is forked as every worker is: the workers'
 * entry module, the primary's `execArgv`, and the scheduling policy `balancing` gives any listener
 * of the service but the app's (`SCHED_NONE`). Under a container memory limit a worker starts with
 * its share of the limit as its heap size (memory-limit.ts), which depends on the number of workers
 * the config asks for: the early worker gets the share of `workers: auto` (one per CPU), and is
 * taken only if the config's share is the same.
 *
 * When the config file (`configFile`, as the command line names or finds it) cannot name a
 * `preload` module, which must run before flotilla loads, the worker loads the App's modules
 * meanwhile too ({@link mayLoadAhead}).
 *
 * @example
 * forkEarlyWorker('app.yaml'); // then, in the Supervisor: const worker = takeEarlyWorker() ?? cluster.fork(env)
 */
export function forkEarlyWorker(configFile: string | null): void {
  const heapArgs = heapArgsFor(availableCpus());
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ exec: fileURLToPath(entryPoint('worker/worker-entry')), execArgv: [...process.execArgv, ...heapArgs] });
  let worker: Worker;
  try {
    worker = cluster.fork({ [EARLY_WORKER_ENV]: mayLoadAhead(configFile) ? LOAD_AHEAD : '1' });
  } catch {
    // the supervisor forks its first worker itself, and reports the failure if it recurs
    return;
  }
  // a failure to fork, or a channel error before it is taken: the supervisor forks a worker of its own
  worker.on('error', () => {});
  early = { worker, heapArgs };
  process.once('exit', dropEarlyWorker);
}

/**
 * The worker {@link forkEarlyWorker} forked, once, if it started with the heap flags the config's
 * workers get (`heapArgs`): `undefined` when there is none, it is gone already, or its flags differ
 * (then it is killed). The caller owns it from then on: it sends `flotilla:start`, and handles its exit.
 */
export function takeEarlyWorker(heapArgs: readonly string[]): Worker | undefined {
  const taken = early;
  early = undefined;
  if (taken === undefined) return undefined;
  const { worker } = taken;
  if (worker.isDead() || !worker.isConnected() || taken.heapArgs.join(' ') !== heapArgs.join(' ')) {
    worker.process.kill('SIGKILL');
    return undefined;
  }
  return worker;
}

/** Kills the early worker if no one took it (it has run nothing of the service yet). */
export function dropEarlyWorker(): void {
  early?.worker.process.kill('SIGKILL');
  early = undefined;
}

/**
 * Whether the early worker may load flotilla's modules before it knows the config: only when the
 * file's text holds neither `preload` nor a backslash (a YAML escape could spell the key), so that
 * no `preload` module (an OpenTelemetry SDK patching what loads after it) can come too late. Read
 * before the config is: a file that cannot be read says no, and the commands report it.
 */
export function mayLoadAhead(configFile: string | null): boolean {
  if (configFile === null) return false;
  try {
    return !/preload|\\/.test(readFileSync(configFile, 'utf8'));
  } catch {
    return false;
  }
}
