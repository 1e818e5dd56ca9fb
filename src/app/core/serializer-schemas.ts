import { _, Ajv, type KeywordCxt } from 'ajv';
import { addFormats } from '../../utils/ajv-formats.ts';

/**
 * The three variants the response serializer (serializer.ts) makes of a
 * response schema — what fits, what fits exactly, what fast-json-stringify
 * writes — and the one ajv instance, with the keywords the variants add,
 * that checks the first two.
 */

export type Mode = 'fit' | 'exact' | 'write';

/** Custom keywords of the checks (never in a user's schema: the variants add them). */
export const JSON_VALUE = 'flotillaJsonValue';
const DATE = 'flotillaDate';
const PLAIN = 'flotillaPlainObject';

/** Keywords whose value is a schema, a list of schemas, or a map of schemas. */
const SUBSCHEMA = new Set(['items', 'additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else']);
const SUBSCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Where fast-json-stringify picks or merges what it writes: an exact fit cannot promise the same JSON, so there is no shortcut. */
const COMPOSITION = new Set([
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  '$dynamicRef',
  '$recursiveRef',
]);
const CONDITIONS = new Set(['not', 'if', 'propertyNames']);
/** What a reference resolves against: stays outside the `anyOf` a string schema is wrapped in. */
const ANCHORS = new Set(['$defs', 'definitions', '$anchor', '$dynamicAnchor', '$id']);

/**
 * One variant of a schema, a new object (the route's schema is never changed):
 * - `fit` checks what may be sent: undeclared properties allowed (they are
 *   left out), a `Date` wherever a string is declared;
 * - `exact` checks that `JSON.stringify` writes what the schema would: every
 *   object plain and without undeclared properties, properties with a
 *   `default` present; `shape.composite` tells that the schema combines
 *   schemas, where no such promise holds;
 * - `write` is what fast-json-stringify compiles: the schema without
 *   `additionalProperties: false` (it leaves undeclared properties out either way).
 * Both checks refuse what JSON cannot hold where the schema names no type.
 * `$id` and `$schema` are dropped from the checks: one validator instance
 * compiles every route's schemas, and references are local (`#/…`).
 */
export function variant(schema: unknown, mode: Mode, shape: { composite: boolean }, isValue = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => variant(s, mode, shape, isValue));
  if (schema === true && mode !== 'write' && isValue) return { [JSON_VALUE]: true };
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (COMPOSITION.has(key) || (key === 'items' && Array.isArray(value))) shape.composite = true;
    if (value === undefined || (mode !== 'write' && (key === '$id' || key === '$schema'))) continue;
    // what `not`, `if` and `propertyNames` hold are conditions on the value, not values to send
    const inner = isValue && !CONDITIONS.has(key);
    if (SUBSCHEMA_MAPS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, variant(s, mode, shape, inner)]));
    } else if (SUBSCHEMA.has(key) || SUBSCHEMA_LISTS.has(key)) {
      out[key] = variant(value, mode, shape, inner);
    } else {
      out[key] = value; // data, not schemas: type, required, enum, const, default…
    }
  }
  if (out['additionalProperties'] === false) delete out['additionalProperties'];
  // declared properties without a type mean an object: a response schema lists what may be sent, and an array of
  // rows must not pass as "not an object, so unconstrained" (JSON Schema's reading) with all their fields
  if (isValue && out['type'] === undefined && ('properties' in out || 'patternProperties' in out)) out['type'] = 'object';
  if (mode === 'write') return out;
  if (out['unevaluatedProperties'] === false) delete out['unevaluatedProperties'];
  const types = typesOf(out);
  if (isValue && types === undefined && !('enum' in out) && !('const' in out) && !('$ref' in out)) out[JSON_VALUE] = true;
  if (isValue && types?.includes('array') && !('items' in out) && !('prefixItems' in out)) out['items'] = { [JSON_VALUE]: true };
  if (mode === 'exact') {
    // declared properties on a schema that also lets other types through (or pins none): an array of rows would
    // pass the exact check unfiltered, so such a response always goes through the serializer
    const declares = 'properties' in out || 'patternProperties' in out;
    if (declares && (types === undefined || types.some((t) => t !== 'object' && t !== 'null'))) shape.composite = true;
    if (types?.includes('object') || declares) exactObject(out);
    return out;
  }
  return types?.includes('string') ? orDate(out) : out;
}

/** An object schema for the exact check: plain objects, nothing undeclared, every property with a `default` present (fast-json-stringify writes the default). */
function exactObject(out: Record<string, unknown>): void {
  out[PLAIN] = true;
  if (!('additionalProperties' in out)) out['additionalProperties'] = false;
  const properties = isObject(out['properties']) ? out['properties'] : {};
  const defaulted = Object.keys(properties).filter((name) => isObject(properties[name]) && 'default' in properties[name]);
  if (defaulted.length > 0) out['required'] = [...new Set([...(Array.isArray(out['required']) ? out['required'] : []), ...defaulted])];
}

/** `{ type: 'string', … }` → `{ anyOf: [{ type: 'string', … }, a Date] }`, what a reference needs kept outside. */
function orDate(out: Record<string, unknown>): Record<string, unknown> {
  const outer: Record<string, unknown> = {};
  const inner: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(out)) (ANCHORS.has(key) ? outer : inner)[key] = value;
  outer['anyOf'] = [inner, { [DATE]: true }];
  return outer;
}

function typesOf(schema: Record<string, unknown>): string[] | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

let ajv: Ajv | undefined;

/**
 * One instance for every route's checks: never coercing, never filling in
 * defaults (the value is the handler's, not to be changed), `NaN` and
 * `Infinity` not numbers; schemas are not checked against the meta-schema
 * (ajv and fast-json-stringify refuse what they cannot compile).
 */
export function validators(): Ajv {
  if (ajv !== undefined) return ajv;
  ajv = new Ajv({
    strict: false,
    allErrors: false,
    allowUnionTypes: true,
    strictNumbers: true,
    coerceTypes: false,
    useDefaults: false,
    validateSchema: false,
    logger: false,
  });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: JSON_VALUE,
    schemaType: 'boolean',
    code: (cxt: KeywordCxt) =>
      cxt.fail(
        _`${cxt.data} === undefined || typeof ${cxt.data} == "function" || typeof ${cxt.data} == "symbol" || typeof ${cxt.data} == "bigint"`,
      ),
  });
  ajv.addKeyword({ keyword: DATE, schemaType: 'boolean', code: (cxt: KeywordCxt) => cxt.fail(_`!(${cxt.data} instanceof Date)`) });
  // `constructor`, not `Object.getPrototypeOf`: as cheap as a property read (a page of 20 items: 160 ns less). A plain
  // object whose prototype is another plain object passes: JSON.stringify then writes less than declared, never more
  ajv.addKeyword({
    keyword: PLAIN,
    type: 'object',
    schemaType: 'boolean',
    code: (cxt: KeywordCxt) => cxt.fail(_`${cxt.data}.constructor !== Object`),
  });
  return ajv;
}
