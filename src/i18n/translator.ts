import { createRequire } from 'node:module';
import type Negotiator from 'negotiator';

/**
 * Translates message keys into a locale.
 *
 * @example
 * const translator: Translator = {
 *   locales: () => ['en', 'fr'],
 *   t: (locale, key, params) => catalogs[locale]?.[key] ?? key,
 * };
 */
export interface Translator {
  t(locale: string, key: string, params?: Record<string, unknown>): string;
  locales(): string[];
}

/** At most this many language ranges of an `Accept-Language` header are read (the rest are ignored). */
const MAX_RANGES = 32;

let negotiatorLib: typeof Negotiator | undefined;

/**
 * Picks the best of the translator's locales for an `Accept-Language` header (RFC 9110,
 * section 12.5.4), with negotiator: the ranges in the client's order of preference (q-values, then
 * the header's order; `q=0` is "not this one"), and for each the closest locale: the same tag,
 * then its language (`en` for `en-US`, before any other region), then a region of it (`pt-BR` for
 * `pt`), then another region of the same language (`en-GB` for `en-US`). Case is ignored. The
 * first locale when nothing matches, or the header is missing or malformed.
 *
 * @example
 * negotiateLocale('en-US, fr;q=0.5', ['en-GB', 'en', 'fr']); // 'en'
 */
export function negotiateLocale(header: string | undefined, available: readonly string[]): string | undefined {
  if (available.length === 0) return undefined;
  if (header === undefined || header === '') return available[0];
  negotiatorLib ??= createRequire(import.meta.url)('negotiator') as typeof Negotiator;
  const of = (value: string) => new negotiatorLib!({ headers: { 'accept-language': value } });
  // the client's ranges, best first (only those of q > 0)
  const ranges = of(header.split(',', MAX_RANGES).join(',')).languages();
  for (const range of ranges) {
    const [closest] = of(range).languages(available);
    if (closest !== undefined) return closest;
    const language = languageOf(range);
    const sibling = available.find((locale) => languageOf(locale) === language);
    if (sibling !== undefined) return sibling;
  }
  return available[0];
}

function languageOf(tag: string): string {
  return tag.split('-', 1)[0]!.toLowerCase();
}
