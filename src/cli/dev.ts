import { dirname, resolve } from 'node:path';
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

/**
 * What `flotilla dev` watches besides the service's directory and the config
 * file: `dev.watch` (by default `migrations`), resolved against the config
 * file's directory as the config's other paths are.
 *
 * @example
 * devWatchPaths(config, '/srv/app/app.yaml'); // ['/srv/app/migrations']
 */
export function devWatchPaths(config: ResolvedConfig, configFile: string): string[] {
  const base = dirname(resolve(configFile));
  return config.dev.watch.map((path) => resolve(base, path));
}
