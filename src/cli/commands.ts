import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { App } from '../app/app.ts';
import { createLogger } from '../app/observability/logger.ts';
import { prettyAvailable } from '../app/observability/pretty-stream.ts';
import { ConfigError } from '../config/config-error.ts';
import { settingsFallbacksOf, settingsSecretProblems } from '../config/fallback-secrets.ts';
import { type LoadedConfig, type LoadOptions, loadConfigFile, locateProblems, START_ENV, type UnsetSetting } from '../config/load-file.ts';
import { redactConfig } from '../config/redact.ts';
import { checkSettings, redactSettings, secretPaths, undeclaredSettings } from '../config/settings.ts';
import { unsetPathsOf, withUnsetMarkers } from '../config/unset-settings.ts';
import { missingClient } from '../coordination/import-client.ts';
import { entryPoint, PACKAGE_JSON } from '../entry-points.ts';
import { Primary } from '../primary/primary.ts';
import { loadService } from '../process/load-service.ts';
import { TlsFileError } from '../utils/tls-files.ts';
import { parseCli, USAGE } from './args.ts';
import { devBanner, devConfig, devWatchPaths } from './dev.ts';
import { discoverConfig, noConfigFile } from './discover-config.ts';

/**
 * The `flotilla` commands. This is the composition root: the only module that
 * brings the primary and the worker side together. The worker side (the App
 * and everything it imports) is loaded only by the commands that build an App
 * in this process: `start` validates the config and forks the workers
 * without it; the primary's own part of the service runs in its service
 * thread (`src/primary/service-thread.ts`), started once a worker listens.
 */
async function main(argv: readonly string[]): Promise<number> {
  let args: ReturnType<typeof parseCli>;
  try {
    args = parseCli(argv);
  } catch (error) {
    process.stderr.write(`flotilla: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.command === 'version') {
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string };
    process.stdout.write(`flotilla ${pkg.version}\n`);
    return 0;
  }

  if (args.command === 'init') {
    const { init } = await import('./init.ts');
    return init({ directory: process.cwd(), force: args.force, out: process.stdout });
  }

  const chosen = discoverConfig(args.config);
  if (chosen === undefined) {
    process.stderr.write(`flotilla: ${noConfigFile()}\n`);
    return 2;
  }
  const configFile = chosen.file;
  if (chosen.discovered) process.stderr.write(`flotilla: using ${configFile} (no --config given)\n`);
  const options = loadOptions(args.command);
  let loaded: LoadedConfig;
  try {
    loaded = loadConfigFile(configFile, process.env, options);
    // in production, the secrets on development fallbacks: the file's and the settings', all at once
    if (loaded.secretProblems.length > 0) throw await secretsRefused(loaded, configFile);
    // before any port opens: the client package coordination.url needs, which workers would miss one by one
    if (args.command === 'start' || args.command === 'dev') clientRequired(loaded, configFile);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`flotilla: ${error.message}\n`);
    return 2;
  }

  switch (args.command) {
    case 'config': {
      const shown = withUnsetMarkers(await effectiveConfig(loaded, configFile), loaded.unset ?? []);
      process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      // `start` would refuse the file: say which variables it needs, and exit as for any other problem
      for (const line of unsetLines(configFile, loaded.unset)) process.stderr.write(`flotilla: ${line}\n`);
      return loaded.unset?.length ? 2 : 0;
    }
    case 'openapi': {
      if (loaded.unset?.length) {
        const names = [...new Set(loaded.unset.flatMap((u) => u.names))].join(', ');
        process.stderr.write(`flotilla: the settings are read without the unset environment variables ${names}\n`);
      }
      const servicePath = requireService(loaded);
      const { App } = await import('../app/app.ts');
      const app = new App(loaded.config, { logStream: pino.destination(2), handleSignals: false });
      // the document alone on stdout; on stderr only what needs attention, not the App's shutdown phases
      if (app.logger.levelVal < app.logger.levels.values['warn']!) app.logger.level = 'warn';
      await located(configFile, async () => (await loadService<App>(servicePath))(app));
      process.stdout.write(`${JSON.stringify(app.openapi(), null, 2)}\n`);
      await app.close();
      return 0;
    }
    case 'start':
    case 'dev': {
      const servicePath = requireService(loaded);
      const dev = args.command === 'dev';
      const pretty = dev && prettyAvailable();
      const config = dev ? devConfig(loaded.config, pretty) : loaded.config;
      // the App's logger format, written synchronously: the primary logs little, and its lines mark the cluster's milestones
      const logger = createLogger(config, config.logging.pretty ? undefined : pino.destination(1), { role: 'primary' });
      logger.info({ env: loaded.env.env }, `env ${loaded.env.env} (${loaded.env.reason})`);
      const workerEntry = fileURLToPath(entryPoint('worker/worker-entry'));
      const load = () => {
        // read again as at the start: the same default env, the same refusal of development secrets
        const again = loadConfigFile(configFile, process.env, { ...options, secrets: dev ? 'allow' : 'refuse' }).config;
        return dev ? devConfig(again, pretty) : again;
      };
      let primary: Primary;
      try {
        primary = new Primary({
          config,
          configFile,
          load,
          servicePath,
          workerEntry,
          logger,
          ...(dev ? { onListening: (address) => process.stdout.write(devBanner(config, address, primary.metricsPort)) } : {}),
        });
      } catch (error) {
        // the certificate files changed for the worse since the config was read: as a config problem
        if (!(error instanceof TlsFileError)) throw error;
        process.stderr.write(`flotilla: ${configFile}: tls.${error.key}: ${error.message}\n`);
        return 2;
      }
      if (!dev) return primary.run();
      if (!pretty) logger.warn('JSON logs: for readable ones, npm install --save-dev pino-pretty');
      // chokidar is loaded by `dev` only
      const { watchService } = await import('./watch.ts');
      const watcher = watchService({ servicePath, configFile, also: devWatchPaths(config, configFile) }, ({ file, isConfig }) => {
        const shown = relative(process.cwd(), file);
        logger.info({ file: shown }, `${shown} changed: restarting the worker (the old one serves until the new one listens)`);
        void primary.reload({ code: !isConfig });
      });
      void watcher.ready.then(() => {
        const [directory, ...also] = watcher.paths.map((p) => relative(process.cwd(), p) || '.');
        logger.info({ directory, ...(also.length > 0 ? { also } : {}) }, 'watching for changes');
      });
      const code = await primary.run();
      await watcher.close();
      return code;
    }
  }
}

/**
 * How each command reads the file. `start` runs as `production` unless the config's `env` or
 * `NODE_ENV` says otherwise, and refuses secrets on development fallbacks there; `dev` runs as
 * `development` by default and refuses nothing. `config` and `openapi` read the file as `start`
 * would (its environment, its defaults); they connect to nothing, so settings whose variables are
 * unset are left out, and `openapi` refuses no development secret (it uses none).
 */
function loadOptions(command: 'start' | 'dev' | 'openapi' | 'config'): LoadOptions {
  switch (command) {
    case 'start':
      return { defaultEnv: START_ENV, secrets: 'report' };
    case 'dev':
      return { defaultEnv: { env: 'development', from: "flotilla dev's default" }, secrets: 'allow' };
    case 'config':
      return { defaultEnv: START_ENV, secrets: 'report', unsetSettings: 'absent' };
    case 'openapi':
      return { defaultEnv: START_ENV, secrets: 'allow', unsetSettings: 'absent' };
  }
}

/**
 * The refusal of a production config whose secrets took development fallbacks: the file's own
 * (`loaded.secretProblems`) and, when some `settings` took fallbacks too, the settings' secrets
 * among them, for which the service module is imported here (only on this failure path: the
 * primary's main thread otherwise runs no service code; the workers would refuse them alone).
 */
async function secretsRefused(loaded: LoadedConfig, configFile: string): Promise<ConfigError> {
  const problems = [...loaded.secretProblems];
  const fallbacks = settingsFallbacksOf(loaded.config);
  if (fallbacks.length > 0 && loaded.servicePath !== undefined) {
    try {
      const schema = (await loadService<App>(loaded.servicePath)).settingsSchema;
      const secrets = schema === undefined ? [] : secretPaths(schema, loaded.config.settings ?? {});
      problems.push(...locateProblems(configFile, settingsSecretProblems(secrets, fallbacks)).problems);
    } catch {
      // the service cannot be loaded here: the file's problems alone (a worker would name the rest)
    }
  }
  return new ConfigError(problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
}

/**
 * What `flotilla config` prints: the effective config with secrets redacted.
 * The `settings` are checked against the service's schema (its module is
 * imported for it), shown with the schema's defaults, and the values the
 * schema marks `writeOnly` or `secret` redacted.
 */
async function effectiveConfig(loaded: LoadedConfig, configFile: string): Promise<Record<string, unknown>> {
  const { config, servicePath } = loaded;
  if (servicePath === undefined) return redactConfig(config);
  const setup = await loadService<App>(servicePath);
  const schema = setup.settingsSchema;
  if (schema === undefined) {
    if (config.settings !== undefined) throw locateProblems(configFile, undeclaredSettings().problems);
    return redactConfig(config);
  }
  const settings = located(configFile, () => checkSettings(schema, config.settings, unsetPathsOf(config), settingsFallbacksOf(config)));
  return redactConfig({ ...config, settings: redactSettings(schema, settings) });
}

/** One line per setting left out for its unset variables: where, and which. */
function unsetLines(configFile: string, unset: readonly UnsetSetting[] = []): string[] {
  return unset.map(
    (u) =>
      `${configFile}:${u.line}: ${u.key}: ${u.names.length > 1 ? 'environment variables' : 'environment variable'} ${u.names.join(', ')} ${u.names.length > 1 ? 'are' : 'is'} not set`,
  );
}

/** Runs `fn`; a `ConfigError` it throws without a file (the service's settings) gets the config file's lines. */
function located<T>(configFile: string, fn: () => T): T {
  const locate = (error: unknown) =>
    error instanceof ConfigError && error.problems.every((p) => p.file === undefined) ? locateProblems(configFile, error.problems) : error;
  try {
    const result = fn();
    if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(locate(error))) as T;
    return result;
  } catch (error) {
    throw locate(error);
  }
}

/**
 * Throws a `ConfigError` at `coordination.url` when the client package it needs (`@redis/client` or
 * `pg`, optional peer dependencies) is not installed: the start stops there, exit 2, naming the
 * package to install.
 */
function clientRequired(loaded: LoadedConfig, configFile: string): void {
  const missing = missingClient(loaded.config.coordination.url);
  if (missing === undefined) return;
  const { scheme, name } = missing;
  const message = `is a ${scheme}:// URL: install ${name} (npm install ${name}), an optional peer dependency of flotilla`;
  throw locateProblems(configFile, [{ key: 'coordination.url', path: ['coordination', 'url'], message }]);
}

function requireService(loaded: LoadedConfig): string {
  if (loaded.servicePath === undefined) {
    throw new ConfigError([
      {
        key: 'service',
        path: ['service'],
        message: 'is required: the path of the service module, relative to the config file',
        file: loaded.file,
      },
    ]);
  }
  return loaded.servicePath;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // The primary's own handles (timers of the shutdown, IPC) are done; exit without waiting on stray ones.
    setTimeout(() => process.exit(code), 50).unref();
  },
  (error: unknown) => {
    process.stderr.write(`flotilla: ${error instanceof ConfigError ? error.message : ((error as Error)?.stack ?? String(error))}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  },
);
