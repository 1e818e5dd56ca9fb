/**
 * A cluster worker's entry module: imports the config's `preload` modules
 * (where an OpenTelemetry SDK is registered), then the worker itself
 * (`worker-main.ts`), so that the preloads run before flotilla and the
 * service are loaded, and in this main thread only (a worker thread inherits
 * `--import` flags; the watchdog thread must not load an SDK). A preload
 * that throws is a boot failure the primary reports, as a service that throws.
 */

import { entryPoint } from '../entry-points.ts';
import { msg } from '../ipc/protocol.ts';
import { importPreloads } from '../process/preload.ts';
import { decodeWorkerStart, WORKER_ENV } from '../process/worker-env.ts';

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
