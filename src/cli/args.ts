import { parseArgs } from 'node:util';
import { createError } from '../errors/flotilla-error.ts';

export const COMMANDS = ['start', 'openapi', 'config'] as const;
export type Command = (typeof COMMANDS)[number];

export interface CliArgs {
  command: Command | 'help' | 'version';
  config: string;
}

export const DEFAULT_CONFIG = 'config/app.yaml';

export const USAGE = `Usage: flotilla <command> [--config <file>]

Commands:
  start     start the primary, which forks and supervises the workers
  openapi   print the service's OpenAPI document (JSON) without listening
  config    validate the config file and print the effective config, secrets redacted

Options:
  -c, --config <file>   the YAML config file (default: ${DEFAULT_CONFIG})
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
      config: { type: 'string', short: 'c', default: DEFAULT_CONFIG },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  if (values.help) return { command: 'help', config: values.config };
  if (values.version) return { command: 'version', config: values.config };
  const [command, ...rest] = positionals;
  if (command === undefined) throw createError('FLO_ERR_CLI_USAGE', { problem: 'a command is required' });
  if (!(COMMANDS as readonly string[]).includes(command))
    throw createError('FLO_ERR_CLI_USAGE', { problem: `unknown command '${command}'` });
  if (rest.length > 0) throw createError('FLO_ERR_CLI_USAGE', { problem: `unexpected argument '${rest[0]}'` });
  return { command: command as Command, config: values.config };
}
