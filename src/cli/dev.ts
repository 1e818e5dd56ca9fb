import { type FSWatcher, watch } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import type { ResolvedConfig } from '../config/types.ts';
import { adoptResolvedConfig } from '../config/validate.ts';

/**
 * The config `flotilla dev` runs: the file's, with one worker (a development
 * loop restarts on every save, and one worker restarts fastest) and
 * `logging.pretty` on when pino-pretty is installed (`pretty`).
 */
export function devConfig(config: ResolvedConfig, pretty: boolean): ResolvedConfig {
  return adoptResolvedConfig({ ...config, workers: 1, logging: { ...config.logging, pretty: pretty || config.logging.pretty } });
}

/** The start banner: where the API, its docs and the metrics answer. */
export function devBanner(config: ResolvedConfig, address: { host: string; port: number }, metricsPort = config.metrics.port): string {
  const host = (h: string) => (h === '0.0.0.0' || h === '::' ? 'localhost' : h.includes(':') ? `[${h}]` : h);
  const api = `http://${host(address.host)}:${address.port}`;
  const lines = [`${config.serviceName} is running (flotilla dev: 1 worker, restarts on save)`, `  API      ${api}/`];
  if (config.env !== 'production') lines.push(`  docs     ${api}${config.docs.path}`);
  if (!config.disableHealth) lines.push(`  health   ${api}/health`);
  if (config.metrics.enabled) lines.push(`  metrics  http://${host(config.metrics.host)}:${metricsPort}${config.metrics.path}`);
  return `\n${lines.join('\n')}\n\n`;
}

/** Directories and files a change in which restarts nothing (logs too: `flotilla dev > dev.log` must not restart on its own output). */
const IGNORED = /(^|[/\\])(node_modules|\.git|dist|coverage)([/\\]|$)|(^|[/\\])\.|~$|\.(swp|tmp|log)$/;

/** Changes within this long of each other make one restart (an editor's save writes several times). */
export const SETTLE_MS = 100;

/**
 * Watches the service's directory (recursively) and the config file; calls
 * `changed(file, isConfig)` once per burst of changes, `SETTLE_MS` after the last.
 * Returns a function that stops watching.
 */
export function watchService(servicePath: string, configFile: string, changed: (file: string, isConfig: boolean) => void): () => void {
  const root = dirname(servicePath);
  const config = resolve(configFile);
  let timer: NodeJS.Timeout | undefined;
  let pending: { file: string; isConfig: boolean } | undefined;
  const note = (file: string) => {
    const isConfig = file === config;
    if (!isConfig && IGNORED.test(relative(root, file))) return;
    pending = { file, isConfig: isConfig && pending?.isConfig !== false };
    clearTimeout(timer);
    timer = setTimeout(() => {
      const what = pending;
      pending = undefined;
      if (what !== undefined) changed(what.file, what.isConfig);
    }, SETTLE_MS);
  };
  const watchers: FSWatcher[] = [watch(root, { recursive: true }, (_event, name) => name && note(resolve(root, name.toString())))];
  // the config file may live outside the service's directory: its own directory then, since an editor
  // that saves by renaming a new file over the old one would leave a watcher of the file itself blind
  if (!config.startsWith(root + sep)) {
    const dir = dirname(config);
    watchers.push(watch(dir, (_event, name) => name && resolve(dir, name.toString()) === config && note(config)));
  }
  for (const w of watchers) w.on('error', () => {});
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
