import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type fastJson from 'fast-json-stringify';
import { createError } from '../../errors/flotilla-error.ts';
import type { JsonSchema } from '../../utils/json-schema.ts';
import type { StandardSchemaV1 } from '../../utils/standard-schema.ts';
import type { ResponseSerializer } from './ctx.ts';
import { declaredOnly } from './declared-only.ts';
import type { Route } from './route.ts';
import { type ResolvedSchema, type RouteSchemas, resolveRouteSchemas } from './route-schemas.ts';
import { isObject, JSON_VALUE, validators, variant } from './serializer-schemas.ts';
import { pointer } from './validation.ts';

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
export function compileSerializer(route: Route, response = resolveRouteSchemas(route).response): ResponseSerializer | undefined {
  const declared = responseSchemas(response);
  if (declared.length === 0) return undefined;
  const exact = new Map<number, Writer>();
  const classes: (Writer | undefined)[] = [];
  let fallback: Writer | undefined;
  for (const [key, schema] of declared) {
    const writer =
      schema.kind === 'standard' ? standardWriter(route, key, schema.standard, schema.shape) : lazyWriter(route, key, schema.json);
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

type Declared = { kind: 'json'; json: JsonSchema } | Extract<ResolvedSchema, { kind: 'standard' }>;

/** The schemas of a route's JSON responses, as `[key, schema]` with the keys as the OpenAPI document writes them. */
function responseSchemas(response: RouteSchemas['response']): [string, Declared][] {
  const out: [string, Declared][] = [];
  for (const [key, resolved] of response) {
    if (key === '204' || key === '304') continue;
    if (resolved.kind === 'standard') out.push([key, resolved]);
    else {
      const json = jsonSchemaOf(resolved.json);
      if (json !== undefined) out.push([key, { kind: 'json', json }]);
    }
  }
  return out;
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

/**
 * A response a schema library checks: its `~standard.validate` runs on the value the handler
 * returned (synchronously: an asynchronous response schema is a 500, logged with the route), its
 * output is what is sent, without the keys the output's JSON Schema does not name when the
 * library can say it (`shape`: Zod's and Valibot's objects strip them themselves, ArkType's keep
 * them), written by `JSON.stringify`.
 */
function standardWriter(route: Route, key: string, schema: StandardSchemaV1, shape: JsonSchema | undefined): Writer {
  const where = `${route.method} ${route.path}`;
  const validate = schema['~standard'].validate;
  return (value, status) => {
    const result = validate(value);
    const which = key === String(status) ? '' : `'${key}' `;
    if (result instanceof Promise) {
      result.catch(() => {});
      throw new ResponseSchemaError(
        `${where}: the ${status} response ${which}schema is asynchronous: response schemas must validate synchronously`,
      );
    }
    if (result.issues !== undefined) {
      const issue = result.issues[0];
      throw new ResponseSchemaError(
        `${where}: the ${status} response does not fit its ${which}schema: ${pointer(issue?.path)} ${issue?.message ?? 'is invalid'}`,
      );
    }
    return JSON.stringify(shape === undefined ? result.value : declaredOnly(result.value, shape, shape));
  };
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
  const bad = (error: unknown) =>
    createError('FLO_ERR_BAD_SCHEMA', { route: where, part: `response ${key}`, reason: (error as Error).message }, { cause: error });
  const shape = { composite: false };
  let fitSchema: JsonSchema;
  let fitsExactly: ValidateFunction | undefined;
  try {
    fitSchema = variant(schema, 'fit', shape) as JsonSchema;
    fitsExactly = shape.composite ? undefined : validators().compile(variant(schema, 'exact', shape) as JsonSchema);
  } catch (error) {
    throw bad(error);
  }
  // the full check and the serializer, when a value first needs them: most replies fit their schema exactly, and a
  // worker's first reply (on a cold start's path) then compiles one validator instead of two and fast-json-stringify
  let full: { fits: ValidateFunction; write: (value: unknown) => string } | Error | undefined;
  const compileFull = () => {
    try {
      const write = loadFastJson()(variant(schema, 'write', shape) as fastJson.AnySchema) as (value: unknown) => string;
      return { fits: validators().compile(fitSchema), write };
    } catch (error) {
      return bad(error);
    }
  };
  const misfit = (status: number, issue: string, cause?: unknown) =>
    new ResponseSchemaError(
      `${where}: the ${status} response does not fit its ${key === String(status) ? '' : `'${key}' `}schema: ${issue}`,
      cause === undefined ? undefined : { cause },
    );
  return (value, status) => {
    // nothing to leave out, nothing to convert: JSON.stringify writes the same JSON, faster (see the comment above)
    if (fitsExactly?.(value)) return JSON.stringify(value);
    full ??= compileFull();
    if (full instanceof Error) throw full;
    const { fits, write } = full;
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

let build: typeof fastJson | undefined;

/** fast-json-stringify is loaded with the first schema compiled: an App that declares none never loads it. */
function loadFastJson(): typeof fastJson {
  build ??= createRequire(import.meta.url)('fast-json-stringify') as typeof fastJson;
  return build;
}
