import { isRecord } from '../../utils/is-record.ts';
import type { JsonSchema } from '../../utils/json-schema.ts';

/**
 * A copy of `value` without the object keys `schema` does not name: the keys of
 * `properties`, unless `additionalProperties` (an object, or `true`) or
 * `patternProperties` lets others through. It follows `properties`, `items`,
 * `prefixItems` and local `$ref`s (`#/$defs/…`, `#/definitions/…` in `root`);
 * under `anyOf`, `oneOf` and `allOf` the value is kept as it is, since which
 * branch applies is the library's to say. Used on a schema library's reply,
 * which it validated already (see `standardWriter` in serializer.ts).
 *
 * @example
 * declaredOnly({ id: 1, secret: 'x' }, { type: 'object', properties: { id: {} } }, schema); // { id: 1 }
 */
export function declaredOnly(value: unknown, schema: unknown, root: JsonSchema, depth = 0): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return value;
  const ref = schema['$ref'];
  if (typeof ref === 'string') return declaredOnly(value, resolve(ref, root), root, depth + 1);
  if (Array.isArray(value)) {
    const prefix = Array.isArray(schema['prefixItems']) ? (schema['prefixItems'] as unknown[]) : [];
    const items = schema['items'];
    if (prefix.length === 0 && !isRecord(items)) return value;
    return value.map((entry, i) => declaredOnly(entry, i < prefix.length ? prefix[i] : items, root, depth + 1));
  }
  const properties = schema['properties'];
  if (!isRecord(value) || !isRecord(properties)) return value;
  const open =
    schema['additionalProperties'] === true || isRecord(schema['additionalProperties']) || schema['patternProperties'] !== undefined;
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) out[key] = declaredOnly(entry, properties[key], root, depth + 1);
    else if (open) out[key] = entry;
  }
  return out;
}

/** Deeper than this (a recursive schema over a deep value), the rest is kept as it is. */
const MAX_DEPTH = 64;

function resolve(ref: string, root: JsonSchema): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    if (!isRecord(at)) return undefined;
    at = at[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return at;
}
