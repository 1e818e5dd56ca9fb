import { createRequire } from 'node:module';
import type addFormatsModule from 'ajv-formats';

/**
 * ajv-formats' plugin, required on first use and typed as it is called: the package is CommonJS with a
 * default export, which TypeScript sees one level too deep under
 * `verbatimModuleSyntax`. Config and request validation both use it.
 *
 * @example
 * addFormats(new Ajv(), ['uri', 'email']);
 */
export function addFormats(...args: Parameters<Plugin>): ReturnType<Plugin> {
  plugin ??= createRequire(import.meta.url)('ajv-formats') as Plugin;
  return plugin(...args);
}

type Plugin = typeof addFormatsModule.default;

/** Required on first use, like ajv itself where it can wait (src/config/settings.ts). */
let plugin: Plugin | undefined;
