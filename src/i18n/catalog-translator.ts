import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
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
      throw new Error(`the fallback locale '${fallback}' has no catalog (have: ${[...this.#catalogs.keys()].join(', ') || 'none'})`);
    this.#fallback = fallback;
  }

  /**
   * Loads every `<locale>.yaml`, `.yml` or `.json` file of a directory.
   *
   * @example
   * const translator = CatalogTranslator.fromDirectory('locales', 'en');
   */
  static fromDirectory(directory: string, fallback: string): CatalogTranslator {
    const catalogs: Record<string, Record<string, unknown>> = {};
    for (const file of readdirSync(directory).sort()) {
      const ext = extname(file);
      if (!['.yaml', '.yml', '.json'].includes(ext)) continue;
      const locale = file.slice(0, -ext.length);
      if (!LOCALE.test(locale)) throw new Error(`${join(directory, file)}: '${locale}' is not a locale tag`);
      const text = readFileSync(join(directory, file), 'utf8');
      const value: unknown = ext === '.json' ? JSON.parse(text) : parseYaml(text);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new Error(`${join(directory, file)}: a catalog must be a mapping of keys to messages`);
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

function flatten(messages: Record<string, unknown>, locale: string, prefix = '', out: Catalog = Object.create(null)): Catalog {
  for (const [key, value] of Object.entries(messages)) {
    const full = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof value === 'string') out[full] = value;
    else if (typeof value === 'object' && value !== null && !Array.isArray(value))
      flatten(value as Record<string, unknown>, locale, full, out);
    else throw new Error(`catalog '${locale}': '${full}' must be a string or a mapping`);
  }
  return out;
}
