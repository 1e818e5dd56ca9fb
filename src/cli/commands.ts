import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { App } from '../app/app.ts';
import { createLogger } from '../app/logger.ts';
import { loadService } from '../cluster/load-service.ts';
import { ConfigError } from '../config/config-error.ts';
import { type LoadedConfig, loadConfigFile } from '../config/load-file.ts';
import { redactConfig } from '../config/redact.ts';
import { Primary } from '../primary/primary.ts';
import { parseCli, USAGE } from './args.ts';

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
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`flotilla ${pkg.version}\n`);
    return 0;
  }

  let loaded: LoadedConfig;
  try {
    loaded = loadConfigFile(args.config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`flotilla: ${error.message}\n`);
    return 2;
  }

  switch (args.command) {
    case 'config':
      process.stdout.write(`${JSON.stringify(redactConfig(loaded.config), null, 2)}\n`);
      return 0;
    case 'openapi': {
      const servicePath = requireService(loaded);
      const { App } = await import('../app/app.ts');
      const app = new App(loaded.config, { logStream: pino.destination(2), handleSignals: false });
      // the document alone on stdout; on stderr only what needs attention, not the App's shutdown phases
      if (app.logger.levelVal < app.logger.levels.values['warn']!) app.logger.level = 'warn';
      await (await loadService<App>(servicePath))(app);
      process.stdout.write(`${JSON.stringify(app.openapi(), null, 2)}\n`);
      await app.close();
      return 0;
    }
    case 'start': {
      const servicePath = requireService(loaded);
      // the App's logger format, written synchronously: the primary logs little, and its lines mark the cluster's milestones
      const logger = createLogger(loaded.config, pino.destination(1), { role: 'primary' });
      const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
      const workerEntry = fileURLToPath(new URL(`../worker/worker-main${ext}`, import.meta.url));
      return new Primary({ config: loaded.config, servicePath, workerEntry, logger }).run();
    }
  }
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
