import type { FallbackValue } from '../config/interpolate.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { createError } from '../errors/flotilla-error.ts';

/** The environment variable carrying a worker's start-up data from the primary. */
export const WORKER_ENV = 'FLOTILLA_WORKER';
/** Set instead for the worker forked before the config was read (src/primary/early-worker.ts): its data comes in `flotilla:start`. */
export const EARLY_WORKER_ENV = 'FLOTILLA_EARLY_WORKER';
/** {@link EARLY_WORKER_ENV}'s value when the config names no `preload` module: the worker loads the App's modules while it waits. */
export const LOAD_AHEAD = 'load-ahead';

/** What the primary hands each worker at fork time: the config it validated, and the service module. */
export interface WorkerStart {
  config: ResolvedConfig;
  servicePath: string;
  /** The config file as the command line named it: problems the service finds in `settings` are located in it. */
  configFile?: string;
  /** Stable index of the worker's slot (0..workers-1), kept across restarts. */
  slot: number;
  /** The `settings` on development fallbacks the service's setup refuses if secret (production only; see fallback-secrets.ts). */
  settingsFallbacks?: readonly FallbackValue[];
}

export function encodeWorkerStart(start: WorkerStart): string {
  return JSON.stringify(start);
}

export function decodeWorkerStart(text: string | undefined): WorkerStart {
  if (text === undefined) throw createError('FLO_ERR_NOT_STARTED_BY_PRIMARY', { variable: WORKER_ENV, problem: 'is not set' });
  let value: WorkerStart;
  try {
    value = JSON.parse(text) as WorkerStart;
  } catch (error) {
    throw createError('FLO_ERR_NOT_STARTED_BY_PRIMARY', { variable: WORKER_ENV, problem: 'is not JSON' }, { cause: error });
  }
  if (typeof value?.servicePath !== 'string' || typeof value.config !== 'object' || !Number.isInteger(value.slot)) {
    throw createError('FLO_ERR_NOT_STARTED_BY_PRIMARY', { variable: WORKER_ENV, problem: 'is malformed' });
  }
  return value;
}
