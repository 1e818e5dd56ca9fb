import type { ResolvedConfig } from '../config/types.ts';

/** The environment variable carrying a worker's start-up data from the primary. */
export const WORKER_ENV = 'FLOTILLA_WORKER';

/** What the primary hands each worker at fork time: the config it validated, and the service module. */
export interface WorkerStart {
  config: ResolvedConfig;
  servicePath: string;
  /** Stable index of the worker's slot (0..workers-1), kept across restarts. */
  slot: number;
}

export function encodeWorkerStart(start: WorkerStart): string {
  return JSON.stringify(start);
}

export function decodeWorkerStart(text: string | undefined): WorkerStart {
  if (text === undefined) throw new Error(`${WORKER_ENV} is not set: this entry point is started by the flotilla primary`);
  const value = JSON.parse(text) as WorkerStart;
  if (typeof value?.servicePath !== 'string' || typeof value.config !== 'object' || !Number.isInteger(value.slot)) {
    throw new Error(`${WORKER_ENV} is malformed`);
  }
  return value;
}
