import { createRequire } from 'node:module';
import { _, Ajv, type ErrorObject, type KeywordCxt, type ValidateFunction } from 'ajv';
import type fastJson from 'fast-json-stringify';
import { createError } from '../errors/flotilla-error.ts';
import { addFormats } from '../utils/ajv-formats.ts';
import { pageSchema } from './pagination.ts';
import type { JsonSchema, Route } from './route.ts';

/**
 * Writes a JSON reply of one route by its response schemas: the body for
 * `value` sent with `status`, or `undefined` when no schema covers that status
 * (the reply is then `JSON.stringify`'d). Throws a {@link ResponseSchemaError}
 * when the value does not fit the schema, before anything is written.
 */
export type ResponseSerializer = (status: number, value: unknown) => string | undefined;

/**
 * A JSON reply that does not fit its route's response schema. The pipeline
 * turns it into a 500 problem, logged with the route; in production its
 * message is not shown to the client.
 */
export class ResponseSchemaError extends Error {
  override readonly name = 'ResponseSchemaError';
}

/**
 * The serializer of a route's response schemas (`schema.response`: a status
 * such as `200` or `'200'`, a class such as `'2xx'`, or `'default'`, as the
 * OpenAPI document reads them; a paginated route without a 200 schema gets the
 * `Page<T>` envelope of its items), or `undefined` when the route declares
 * none: its replies keep `JSON.stringify`. Per status, the exact status wins
 * over its class, and the class over `default`; 204 and 304 have no body.
 *
 * Each schema is compiled on its first response (the three compilations cost
 * a few milliseconds, too much to pay for every route at start-up); a schema
 * that cannot be compiled makes those responses 500s, logged as
 * `FLO_ERR_BAD_SCHEMA`.
 *
 * What is sent: exactly the declared properties. A value fits its schema when
 * it validates against it (types, `required`, `enum`, `format`, bounds…) with
 * two differences: a property the schema does not declare is left out instead
 * of refused (whatever `additionalProperties: false` says), and a `Date`
 * counts as a string (sent as ISO 8601, or as `format: date` / `time` says). A
 * value that JSON cannot hold (a function, a symbol, a BigInt, `undefined` in
 * an array, `NaN`, `Infinity`) does not fit. `toJSON()` is called by the
 * writer, not before the check: the check sees the value as returned.
 *
 * How it is written: when the value fits exactly (plain objects with nothing
 * undeclared, no `Date`, no property left to a `default`, no `anyOf` and the
 * like to choose from), `JSON.stringify` writes it: the same JSON, byte for
 * byte what the route sent before it declared a schema, and on Node 24 faster
 * than fast-json-stringify writes such a value (`bench/`, `--serializer-only`);
 * otherwise fast-json-stringify writes the declared properties.
 *
 * @example
 * const serialize = compileSerializer({ method: 'GET', path: '/me', handler, schema: { response: { 200: user } } });
 * serialize?.(200, { id: 7, password: 'x' }); // '{"id":7}'
 */
export function compileSerializer(route: Route): ResponseSerializer | undefined {
  const declared = responseSchemas(route);
  if (declared.length === 0) return undefined;
  const exact = new Map<number, Writer>();
  const classes: (Writer | undefined)[] = [];
  let fallback: Writer | undefined;
  for (const [key, schema] of declared) {
    const writer = lazyWriter(route, key, schema);
    if (key === 'default') fallback = writer;
    else if (key.endsWith('XX')) classes[Number(key[0])] = writer;
    else exact.set(Number(key), writer);
  }
  return (status, value) => {
    if (status === 204 || status === 304) return undefined;
    const write = exact.get(status) ?? classes[(status / 100) | 0] ?? fallback;
    return write === undefined ? undefined : write(value, status);
  };
}

type Writer = (value: unknown, status: number) => string | undefined;

/** The JSON Schemas of a route's JSON responses, as `[key, schema]` with the keys as the OpenAPI document writes them. */
function responseSchemas(route: Route): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [];
  for (const [key, declared] of Object.entries(route.schema?.response ?? {})) {
    const code = statusKey(key);
    const schema = jsonSchemaOf(declared);
    if (code !== undefined && code !== '204' && code !== '304' && schema !== undefined) out.push([code, schema]);
  }
  const paginated = route.paginated;
  if (paginated !== undefined && !out.some(([key]) => key === '200')) out.push(['200', pageSchema(paginated.item)]);
  return out;
}

/** `200`, `'2xx'`, `'2XX'`, `'default'` → the key the OpenAPI document uses; `undefined` for anything else (ignored there too). */
function statusKey(key: string): string | undefined {
  if (key === 'default' || /^[1-5][0-9][0-9]$/.test(key)) return key;
  if (/^[1-5]xx$/i.test(key)) return key.toUpperCase();
  return undefined;
}

/** Words of a schema that say nothing of the value: a schema of these alone lets anything through, as `JSON.stringify` does. */
const ANNOTATIONS = new Set([
  '$id',
  '$schema',
  '$comment',
  'title',
  'description',
  'examples',
  'example',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/**
 * The JSON Schema of a declared response: the schema itself, or the
 * `application/json` one of Fastify's `{ description, content: { <media
 * type>: { schema } } }` form; `undefined` when nothing is declared for JSON.
 */
function jsonSchemaOf(declared: unknown): JsonSchema | undefined {
  if (!isObject(declared)) return undefined;
  const content = declared['content'];
  const schema = isObject(content) && Object.keys(content).some((type) => type.includes('/')) ? jsonMedia(content) : declared;
  if (schema === undefined || Object.keys(schema).every((key) => ANNOTATIONS.has(key))) return undefined;
  return schema;
}

function jsonMedia(content: Record<string, unknown>): JsonSchema | undefined {
  const media = content['application/json'];
  const schema = isObject(media) ? media['schema'] : undefined;
  return isObject(schema) ? schema : undefined;
}

/** Compiles the schema on its first use, once: a failure is kept and thrown again by every response that needs it. */
function lazyWriter(route: Route, key: string, schema: JsonSchema): Writer {
  let write: Writer | undefined;
  return (value, status) => {
    if (write === undefined) {
      try {
        write = compileWriter(route, key, schema);
      } catch (error) {
        write = () => {
          throw error;
        };
      }
    }
    return write(value, status);
  };
}

function compileWriter(route: Route, key: string, schema: JsonSchema): Writer {
  const where = `${route.method} ${route.path}`;
  let fits: ValidateFunction;
  let fitsExactly: ValidateFunction | undefined;
  let write: (value: unknown) => string;
  try {
    const shape = { composite: false };
    fits = validators().compile(variant(schema, 'fit', shape) as JsonSchema);
    fitsExactly = shape.composite ? undefined : validators().compile(variant(schema, 'exact', shape) as JsonSchema);
    write = loadFastJson()(variant(schema, 'write', shape) as fastJson.AnySchema) as (value: unknown) => string;
  } catch (error) {
    throw createError('FLO_ERR_BAD_SCHEMA', { route: where, part: `response ${key}`, reason: (error as Error).message }, { cause: error });
  }
  const misfit = (status: number, issue: string, cause?: unknown) =>
    new ResponseSchemaError(
      `${where}: the ${status} response does not fit its ${key === String(status) ? '' : `'${key}' `}schema: ${issue}`,
      cause === undefined ? undefined : { cause },
    );
  return (value, status) => {
    // nothing to leave out, nothing to convert: JSON.stringify writes the same JSON, faster (see the comment above)
    if (fitsExactly?.(value)) return JSON.stringify(value);
    if (!fits(value)) throw misfit(status, describe(fits.errors));
    try {
      return write(value);
    } catch (error) {
      throw misfit(status, error instanceof Error ? error.message : String(error), error);
    }
  };
}

/** The first failed check, as `/data/3/price must be number` (the value itself is never quoted). */
function describe(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (e === undefined) return 'it is invalid';
  if (e.keyword === 'required') return `${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty} is missing`;
  const path = e.instancePath === '' ? '/' : e.instancePath;
  return `${path} ${e.keyword === JSON_VALUE ? 'must be a value JSON can hold' : (e.message ?? 'is invalid')}`;
}

// ---- the three variants of a schema: what fits, what fits exactly, what fast-json-stringify writes ----

type Mode = 'fit' | 'exact' | 'write';

/** Custom keywords of the checks (never in a user's schema: the variants add them). */
const JSON_VALUE = 'flotillaJsonValue';
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
function variant(schema: unknown, mode: Mode, shape: { composite: boolean }, isValue = true): unknown {
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---- the libraries, loaded and set up on first use ----

let ajv: Ajv | undefined;

/**
 * One instance for every route's checks: never coercing, never filling in
 * defaults (the value is the handler's, not to be changed), `NaN` and
 * `Infinity` not numbers; schemas are not checked against the meta-schema
 * (ajv and fast-json-stringify refuse what they cannot compile).
 */
function validators(): Ajv {
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

let build: typeof fastJson | undefined;

/** fast-json-stringify is loaded with the first schema compiled: an App that declares none never loads it. */
function loadFastJson(): typeof fastJson {
  build ??= createRequire(import.meta.url)('fast-json-stringify') as typeof fastJson;
  return build;
}
