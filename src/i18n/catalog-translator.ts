import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { createError } from '../errors/flotilla-error.ts';
import type { Translator } from './translator.ts';

/** `yaml` is loaded when a catalog is YAML: every worker imports this module, few read YAML catalogs. */
const load = createRequire(import.meta.url);
function parseYaml(text: string): unknown {
  const { parse } = load('yaml') as typeof import('yaml');
  return parse(text, { schema: 'core', merge: false, uniqueKeys: true, maxAliasCount: 0 });
}

/** Messages of one locale: nested objects flatten to dotted keys (`errors.NOT_FOUND`). */
export type Catalog = Record<string, string>;

const LOCALE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;
const PARAM = /\{(\w+)\}/g;

/**
 * A translator over message catalogs, one per locale, with `{name}`
 * parameters and a fallback locale. A missing key falls back to the fallback
 * locale, then to the key itself.
 *
 * @example
 * const translator = new CatalogTranslator({ en: { greeting: 'Hello {name}' }, fr: { greeting: 'Bonjour {name}' } }, 'en');
 * translator.t('fr', 'greeting', { name: 'Ada' }); // 'Bonjour Ada'
 */
export class CatalogTranslator implements Translator {
  readonly #catalogs: Map<string, Catalog>;
  readonly #fallback: string;

  constructor(catalogs: Record<string, Record<string, unknown>>, fallback: string) {
    this.#catalogs = new Map(Object.entries(catalogs).map(([locale, messages]) => [locale, flatten(messages, locale)]));
    if (!this.#catalogs.has(fallback))
      throw createError('FLO_ERR_NO_FALLBACK_CATALOG', { fallback, locales: [...this.#catalogs.keys()].join(', ') || 'none' });
    this.#fallback = fallback;
  }

  /**
   * Loads every `<locale>.yaml`, `.yml` or `.json` file of a directory. A
   * directory or file that cannot be read is a `FLO_ERR_I18N_DIRECTORY`
   * error (the fs error is its `cause`); a file that does not parse, or is not
   * a catalog, a `FLO_ERR_BAD_CATALOG`.
   *
   * @example
   * const translator = CatalogTranslator.fromDirectory('locales', 'en');
   */
  static fromDirectory(directory: string, fallback: string): CatalogTranslator {
    const catalogs: Record<string, Record<string, unknown>> = {};
    for (const file of readCatalogDirectory(directory)) {
      const ext = extname(file);
      if (!['.yaml', '.yml', '.json'].includes(ext)) continue;
      const path = join(directory, file);
      const locale = file.slice(0, -ext.length);
      if (!LOCALE.test(locale)) throw createError('FLO_ERR_BAD_LOCALE', { file: path, locale });
      const value = parseCatalog(path, ext);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw createError('FLO_ERR_BAD_CATALOG', { catalog: path, reason: 'a catalog must be a mapping of keys to messages' });
      catalogs[locale] = value as Record<string, unknown>;
    }
    return new CatalogTranslator(catalogs, fallback);
  }

  locales(): string[] {
    return [this.#fallback, ...[...this.#catalogs.keys()].filter((l) => l !== this.#fallback)];
  }

  /** Whether a locale (or the fallback) has a message for `key`. */
  has(locale: string, key: string): boolean {
    return this.#catalogs.get(locale)?.[key] !== undefined || this.#catalogs.get(this.#fallback)?.[key] !== undefined;
  }

  t(locale: string, key: string, params?: Record<string, unknown>): string {
    const message = this.#catalogs.get(locale)?.[key] ?? this.#catalogs.get(this.#fallback)?.[key];
    if (message === undefined) return key;
    if (params === undefined) return message;
    return message.replace(PARAM, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
  }
}

function readCatalogDirectory(directory: string): string[] {
  try {
    return readdirSync(directory).sort();
  } catch (error) {
    throw createError('FLO_ERR_I18N_DIRECTORY', { path: directory, reason: (error as Error).message }, { cause: error });
  }
}

function parseCatalog(path: string, ext: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw createError('FLO_ERR_I18N_DIRECTORY', { path, reason: (error as Error).message }, { cause: error });
  }
  try {
    return ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw createError('FLO_ERR_BAD_CATALOG', { catalog: path, reason: (error as Error).message }, { cause: error });
  }
}

function flatten(messages: Record<string, unknown>, locale: string, prefix = '', out: Catalog = Object.create(null)): Catalog {
  for (const [key, value] of Object.entries(messages)) {
    const full = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof value === 'string') out[full] = value;
    else if (typeof value === 'object' && value !== null && !Array.isArray(value))
      flatten(value as Record<string, unknown>, locale, full, out);
    else throw createError('FLO_ERR_BAD_CATALOG', { catalog: `catalog '${locale}'`, reason: `'${full}' must be a string or a mapping` });
  }
  return out;
}
