import { parseArgs } from 'node:util';
import { createError } from '../errors/flotilla-error.ts';

export const COMMANDS = ['start', 'dev', 'openapi', 'config', 'init'] as const;
export type Command = (typeof COMMANDS)[number];

export interface CliArgs {
  command: Command | 'help' | 'version';
  /** The `--config` file; undefined without one (see `discoverConfig`). */
  config: string | undefined;
  /** `init`: overwrite files that exist. */
  force: boolean;
}

/** The files taken without `--config`, in this order (see `discover-config.ts`). */
export const DEFAULT_CONFIGS = ['app.yaml', 'config/app.yaml'] as const;

export const USAGE = `Usage: flotilla <command> [--config <file>]

Commands:
  start     start the primary, which forks and supervises the workers
  dev       start one worker with readable logs; restart it without a gap when a file changes
  openapi   print the service's OpenAPI document (JSON) without listening
  config    validate the config file and print the effective config, secrets redacted
  init      write a working service into this project (app.yaml, src/, test/, tsconfig.json)

Options:
  -c, --config <file>   the YAML config file (default: ${DEFAULT_CONFIGS.join(', then ')}; \`init\` writes app.yaml)
  -f, --force           \`init\`: overwrite files that exist
  -h, --help            show this help
  -v, --version         show the version
`;

/** Parses the command line; throws a TypeError with a usage hint for anything unknown. */
export function parseCli(argv: readonly string[]): CliArgs {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      force: { type: 'boolean', short: 'f', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  const { config, force } = values;
  if (values.help) return { command: 'help', config, force };
  if (values.version) return { command: 'version', config, force };
  const [command, ...rest] = positionals;
  if (command === undefined) throw createError('FLO_ERR_CLI_USAGE', { problem: 'a command is required' });
  if (!(COMMANDS as readonly string[]).includes(command))
    throw createError('FLO_ERR_CLI_USAGE', { problem: `unknown command '${command}'` });
  if (rest.length > 0) throw createError('FLO_ERR_CLI_USAGE', { problem: `unexpected argument '${rest[0]}'` });
  if (force && command !== 'init') throw createError('FLO_ERR_CLI_USAGE', { problem: '--force applies to init only' });
  return { command: command as Command, config, force };
}
