/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

/**
 * A key of `schema.response` as the OpenAPI document and the serializer read it: `200`, `'2xx'` or
 * `'2XX'` (→ `'2XX'`), `'default'`; `undefined` for anything else, which both ignore.
 *
 * @example
 * statusKey('2xx'); // '2XX'
 * statusKey('ok'); // undefined
 */
export function statusKey(key: string): string | undefined {
  if (key === 'default' || /^[1-5][0-9][0-9]$/.test(key)) return key;
  if (/^[1-5]xx$/i.test(key)) return key.toUpperCase();
  return undefined;
}
