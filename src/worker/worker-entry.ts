/**
 * A cluster worker's entry module: imports the config's `preload` modules
 * (where an OpenTelemetry SDK is registered), then the worker itself
 * (`worker-main.ts`), so that the preloads run before flotilla and the
 * service are loaded, and in this main thread only (a worker thread inherits
 * `--import` flags; the watchdog thread must not load an SDK). A preload
 * that throws is a boot failure the primary reports, as a service that throws.
 */

import { entryPoint } from '../entry-points.ts';
import { isPrimaryMessage, msg } from '../ipc/protocol.ts';
import { importPreloads } from '../process/preload.ts';
import { decodeWorkerStart, EARLY_WORKER_ENV, LOAD_AHEAD, WORKER_ENV } from '../process/worker-env.ts';

// the worker forked before the config was read: its start-up data comes in `flotilla:start`; meanwhile,
// when the config can name no `preload` module, it loads the App's modules (src/primary/early-worker.ts)
const early = process.env[EARLY_WORKER_ENV];
delete process.env[EARLY_WORKER_ENV];
// a worker forked with its data never waits (the variable inherited from a user's environment, say)
if (early !== undefined && process.env[WORKER_ENV] === undefined) {
  const started = startMessage();
  if (early === LOAD_AHEAD) await import('../app/index.ts');
  process.env[WORKER_ENV] = await started;
}
const { config } = decodeWorkerStart(process.env[WORKER_ENV]);
let failure: unknown;
try {
  await importPreloads(config.preload);
} catch (error) {
  failure = error;
}
if (failure === undefined) await import(entryPoint('worker/worker-main').href);
else {
  process.stderr.write(`${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}\n`);
  const exit = () => process.exit(1);
  if (process.connected) process.send?.(msg.bootFailed(process.pid, 'service', (failure as Error).message), undefined, {}, exit);
  else exit();
  setTimeout(exit, 1_000).unref();
}

/**
 * The start-up data of `flotilla:start`, the first message the primary sends this worker. Until then
 * signals aimed at the process group are ignored, as a started worker ignores them (the primary
 * drives the shutdown; it kills a worker it does not take); a lost channel ends the process.
 */
function startMessage(): Promise<string> {
  const ignore = () => {};
  const gone = () => process.exit(1);
  process.on('SIGINT', ignore).on('SIGTERM', ignore).on('disconnect', gone);
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!isPrimaryMessage(message) || message.type !== 'flotilla:start') return;
      process.off('message', onMessage).off('SIGINT', ignore).off('SIGTERM', ignore).off('disconnect', gone);
      resolve(message.start);
    };
    process.on('message', onMessage);
  });
}
