import { Worker } from 'node:worker_threads';
import type { FallbackValue } from '../config/interpolate.ts';
import type { ResolvedConfig } from '../config/types.ts';
import { entryPoint } from '../entry-points.ts';

/** What the settings check is given: the config as the workers get it, and where its service is. */
export interface SettingsCheckData {
  config: ResolvedConfig;
  servicePath: string;
  /** The config file, where the problems are located. */
  configFile?: string;
  /** The `settings` on development fallbacks, refused when the schema marks them secret (see fallback-secrets.ts). */
  settingsFallbacks?: readonly FallbackValue[];
}

/**
 * The answer of the settings check: valid, invalid with the problems as the CLI prints them
 * (`invalid configuration:\n  - app.yaml:12: settings.colour: unknown key`), or not known
 * (`valid: undefined`) when the service's module could not be read there: the workers, which load
 * it too, report why.
 */
export type SettingsVerdict = { valid: true } | { valid: false; message: string } | { valid: undefined };

/** A running settings check: its verdict, and how to end it early. */
export interface SettingsCheck {
  readonly verdict: Promise<SettingsVerdict>;
  /** Ends the thread if it still runs (its verdict is then not known). */
  stop(): void;
}

/** Time a check asked for with `delayMs` waits for a worker's setup to make it moot, before its thread starts. */
export const SETTINGS_CHECK_DELAY_MS = 1_000;

/**
 * Checks the config's `settings` against the service's schema, before the primary opens a port:
 * a typo under `settings` then stops the start with the file's lines on stderr, as any other config
 * problem does, not after the metrics endpoint is up, in a worker's log. The schema is in the
 * service's module, which is imported for it in a thread of its own that ends with its answer
 * (`settings-check-thread.ts`): the primary's main thread still loads no service code.
 *
 * With `delayMs`, the thread starts only if `stop()` was not called by then: the workers check the
 * settings in their setup too, and one whose setup ran (or failed on them) makes the check moot; the
 * thread, a third loader of the service beside the two first workers of a 2-core pod, cost its cold
 * start about 200 ms (bench/results/footprint-kernel-no-check-thread.md). A setup slower than that
 * (a database to reach) still gets its verdict, and the metrics endpoint, early.
 *
 * @example
 * const check = checkSettingsInThread({ config, servicePath, configFile });
 * const verdict = await check.verdict; // { valid: false, message: 'invalid configuration: …' }
 */
export function checkSettingsInThread(data: SettingsCheckData, delayMs = 0): SettingsCheck {
  let thread: Worker | undefined;
  let stopped = false;
  const { promise: verdict, resolve } = Promise.withResolvers<SettingsVerdict>();
  const start = () => {
    if (stopped) return;
    const started = new Worker(entryPoint('primary/settings-check-thread'), { workerData: data });
    started.once('message', (answer: SettingsVerdict) => resolve(answer));
    // a thread that dies without answering (out of memory, terminated) knows nothing
    started.once('error', () => resolve({ valid: undefined }));
    started.once('exit', () => resolve({ valid: undefined }));
    thread = started;
  };
  const timer = delayMs > 0 ? setTimeout(start, delayMs) : undefined;
  if (timer === undefined) start();
  return {
    verdict,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      void thread?.terminate();
    },
  };
}
