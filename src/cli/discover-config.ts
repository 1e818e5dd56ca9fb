import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIGS } from './args.ts';

/** The config file of a command, and whether it was found rather than named by `--config`. */
export interface ChosenConfig {
  file: string;
  discovered: boolean;
}

/**
 * The config file of a command: the one `--config` names, else the first of
 * `app.yaml` and `config/app.yaml` that exists in `cwd` (the first is what
 * `flotilla init` writes, the second this repository's layout); undefined
 * when neither exists (see `noConfigFile`).
 *
 * @example
 * discoverConfig(undefined, '/srv/books'); // { file: 'app.yaml', discovered: true } when /srv/books/app.yaml exists
 */
export function discoverConfig(given: string | undefined, cwd: string = process.cwd()): ChosenConfig | undefined {
  if (given !== undefined) return { file: given, discovered: false };
  const found = DEFAULT_CONFIGS.find((candidate) => existsSync(join(cwd, candidate)));
  return found === undefined ? undefined : { file: found, discovered: true };
}

/**
 * What the CLI says when no `--config` was given and neither default file exists.
 *
 * @example
 * noConfigFile('/srv/books'); // 'no config file: neither app.yaml nor config/app.yaml exists in /srv/books; …'
 */
export function noConfigFile(cwd: string = process.cwd()): string {
  return `no config file: neither ${DEFAULT_CONFIGS.join(' nor ')} exists in ${cwd}; name one with --config <file>, or write one with \`flotilla init\``;
}
