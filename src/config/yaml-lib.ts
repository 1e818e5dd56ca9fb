import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let lib: typeof Yaml | undefined;

/**
 * The yaml package, required on first use. Every process loads this folder
 * (`loadConfig` is exported with the App), but only the primary and the CLI
 * read YAML: a worker and the service thread receive the config resolved.
 *
 * @example
 * const doc = yaml().parseDocument(text);
 */
export function yaml(): typeof Yaml {
  lib ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return lib;
}
