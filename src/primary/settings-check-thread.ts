/**
 * The primary's check of the service's `settings`, in a thread that ends once it has answered
 * (started by `settings-check.ts`): the schema is declared in the service's module
 * (`defineService({ settings, setup })`) and can be had only by importing it, which the primary's
 * main thread never does (it would keep the service's module graph for the life of the cluster). The
 * module is imported and its schema read; no setup runs, nor the config's `preload` modules. The
 * answer is a `SettingsVerdict`.
 *
 * The thread runs at the lowest CPU priority: with `balancing: kernel` the workers are forked
 * meanwhile and load the same code, and a third loader beside the two first workers of a 2-core pod
 * cost its cold start about 200 ms (bench/results/footprint-kernel-no-check-thread.md). So it gets
 * what CPU they leave; a worker whose setup ran first makes its verdict moot, and it is ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ConfigProblem } from '../config/config-error.ts';
import { lowerThreadPriority } from '../utils/thread-priority.ts';
import type { SettingsCheckData, SettingsVerdict } from './settings-check.ts';

/** The thread's nice value: the lowest priority there is. */
const NICE = 19;

lowerThreadPriority(NICE);
const port = parentPort;
if (port === null) throw new Error('settings-check-thread.ts runs as a worker thread of the flotilla primary');
const { config, servicePath, configFile, settingsFallbacks = [] } = workerData as SettingsCheckData;
// loaded once the priority is lowered: the config's validation and ajv are a loader's share too
const [{ ConfigError }, { locateProblems }, { checkSettings, undeclaredSettings }, { loadService }] = await Promise.all([
  import('../config/config-error.ts'),
  import('../config/load-file.ts'),
  import('../config/settings.ts'),
  import('../process/load-service.ts'),
]);

/** The problems of the settings; undefined when the module cannot be read here (a worker will say why). */
async function problemsOfSettings(): Promise<readonly ConfigProblem[] | undefined> {
  let schema: object | undefined;
  try {
    schema = (await loadService(servicePath)).settingsSchema;
  } catch {
    return undefined;
  }
  if (schema === undefined) return config.settings === undefined ? [] : undeclaredSettings().problems;
  try {
    checkSettings(schema, config.settings, [], settingsFallbacks);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    // a schema ajv cannot compile: the workers' setup reports it as the service's failure
    return undefined;
  }
}

const problems = await problemsOfSettings();
const verdict: SettingsVerdict =
  problems === undefined
    ? { valid: undefined }
    : problems.length === 0
      ? { valid: true }
      : {
          valid: false,
          message: (configFile === undefined ? new ConfigError([...problems]) : locateProblems(configFile, problems)).message,
        };
port.postMessage(verdict);
// what the service's module started at its import (a timer, a pool) does not keep the thread
process.exit(0);
