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

/**
 * Picks the best of the translator's locales for an `Accept-Language` header
 * (q-values respected, `en-US` falls back to `en`); the first locale otherwise.
 */
export function negotiateLocale(header: string | undefined, available: readonly string[]): string | undefined {
  if (available.length === 0) return undefined;
  if (header === undefined || header === '') return available[0];
  const ranges = header
    .split(',', 32)
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { tag: tag.trim().toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((r) => r.tag !== '' && r.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  const lower = available.map((l) => l.toLowerCase());
  for (const { tag } of ranges) {
    if (tag === '*') return available[0];
    const exact = lower.indexOf(tag);
    if (exact !== -1) return available[exact];
    const base = tag.split('-')[0];
    const partial = lower.findIndex((l) => l === base || l.split('-')[0] === base);
    if (partial !== -1) return available[partial];
  }
  return available[0];
}
