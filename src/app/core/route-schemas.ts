import { createRequire } from 'node:module';
import { createError } from '../../errors/flotilla-error.ts';
import type { HookDocs } from '../../utils/hook-docs.ts';
import { isRecord } from '../../utils/is-record.ts';
import { type JsonSchema, statusKey } from '../../utils/json-schema.ts';
import { isStandardSchema, type StandardJsonSchemaProps, type StandardSchemaV1 } from '../../utils/standard-schema.ts';
import { pageSchema, type StandardPage } from '../pagination/page.ts';
import type { Route, RouteSchema } from './route.ts';

/**
 * A schema slot's value as registration resolved it, once per route: a JSON
 * Schema, validated by ajv; or a Standard Schema (Zod, Valibot, ArkType…),
 * validated by its library, with the JSON Schema the OpenAPI document shows
 * for it (`json`: `undefined` when the library cannot say it) and, for a
 * response, the JSON Schema of what it produces when that is exact (`shape`:
 * the reply's undeclared keys are dropped by it).
 */
export type ResolvedSchema =
  | { kind: 'json'; json: JsonSchema }
  | { kind: 'standard'; standard: StandardSchemaV1; json: JsonSchema | undefined; shape: JsonSchema | undefined };

/** A request part a schema validates. */
export type RequestPart = 'params' | 'querystring' | 'headers' | 'cookies' | 'body';

/** A route's schemas, resolved at registration: the request parts', and the responses' by status key (`200`, `'2XX'`, `'default'`). */
export interface RouteSchemas {
  request: Partial<Record<RequestPart, ResolvedSchema>>;
  response: [key: string, schema: ResolvedSchema][];
  /** A paginated route's item schema. */
  item?: ResolvedSchema;
}

const REQUEST_PARTS: readonly RequestPart[] = ['params', 'querystring', 'headers', 'cookies', 'body'];

/**
 * Resolves every schema of a route once (`resolveSchema`); a paginated route without a 200 schema
 * gets the `Page<T>` envelope of its item schema. Response keys that are not statuses are left out,
 * as the document and the serializer ignore them.
 */
export function resolveRouteSchemas(route: Route): RouteSchemas {
  const where = `${route.method} ${route.path}`;
  const s = route.schema ?? {};
  const request: RouteSchemas['request'] = {};
  for (const part of REQUEST_PARTS) if (s[part] !== undefined) request[part] = resolveSchema(s[part], where, part, 'input');
  const response: RouteSchemas['response'] = [];
  for (const [key, declared] of Object.entries(s.response ?? {})) {
    const code = statusKey(key);
    if (code !== undefined) response.push([code, resolveSchema(declared, where, `response ${key}`, 'output')]);
  }
  if (route.paginated === undefined) return { request, response };
  const item = resolveSchema(route.paginated.item, where, 'paginated item', 'output');
  if (!response.some(([key]) => key === '200')) {
    response.push(['200', resolveSchema(pageSchema(item.kind === 'json' ? item.json : item.standard), where, 'response 200', 'output')]);
  }
  return { request, response, item };
}

/** A route's schemas as JSON Schema, as the OpenAPI document reads them. */
export interface JsonRouteSchema extends Omit<RouteSchema, RequestPart | 'response'> {
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  headers?: JsonSchema;
  cookies?: JsonSchema;
  response?: Record<number | string, JsonSchema>;
}

/** A registered route as the OpenAPI document reads it (see `documentedRoute`). */
export interface DocumentedRoute extends Omit<Route, 'schema' | 'paginated'> {
  schema?: JsonRouteSchema;
  paginated?: { item: JsonSchema };
  /** What the `onRequest` hooks guarding it tell the document (see src/utils/hook-docs.ts). */
  guards?: readonly HookDocs[];
  /** The rate limit in force (its own, else its group's or the App's): the document's 429. */
  rateLimited?: { readonly max: number; readonly windowMs: number };
}

/**
 * The route as the OpenAPI document reads it: every schema as JSON Schema (a library's derived
 * one; `{}` where the library cannot say it), and a paginated route's item schema likewise.
 */
export function documentedRoute(route: Route, schemas: RouteSchemas): DocumentedRoute {
  const { schema: _declared, paginated, ...rest } = route;
  if (route.schema === undefined && paginated === undefined) return rest;
  const json = (resolved: ResolvedSchema): JsonSchema => resolved.json ?? {};
  const schema: JsonRouteSchema = {};
  for (const [part, resolved] of Object.entries(schemas.request)) schema[part as RequestPart] = json(resolved);
  if (route.schema?.response !== undefined || route.paginated !== undefined) {
    schema.response = Object.fromEntries(schemas.response.map(([key, resolved]) => [key, json(resolved)]));
  }
  return schemas.item === undefined ? { ...rest, schema } : { ...rest, schema, paginated: { item: json(schemas.item) } };
}

/** What a slot describes: a request part (what the schema accepts) or a response (what it produces). */
export type Direction = 'input' | 'output';

/**
 * Resolves one slot's value, refusing (with `FLO_ERR_BAD_SCHEMA`, naming the route and the slot)
 * anything that is neither a JSON Schema (a plain object) nor a Standard Schema.
 *
 * @example
 * resolveSchema(z.object({ title: z.string() }), 'POST /books', 'body', 'input');
 * // { kind: 'standard', standard, json: { type: 'object', properties: { title: { type: 'string' } }, … }, shape: undefined }
 */
export function resolveSchema(value: unknown, route: string, part: string, direction: Direction): ResolvedSchema {
  if (isStandardSchema(value)) {
    const json = derive(value, direction);
    return { kind: 'standard', standard: value, json: json?.schema, shape: json?.exact ? json.schema : undefined };
  }
  if (isRecord(value)) return { kind: 'json', json: value };
  throw createError('FLO_ERR_BAD_SCHEMA', {
    route,
    part,
    reason: `expected a JSON Schema (a plain object) or a Standard Schema (Zod, Valibot, ArkType…: a value with "~standard"), got ${describe(value)}`,
  });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an instance of ${(value as object).constructor?.name ?? 'a class'} without "~standard"`;
  return typeof value === 'function' ? 'a function without "~standard"' : `a ${typeof value}`;
}

const TARGET = 'draft-2020-12';

/**
 * The JSON Schema of a Standard Schema, derived once: by Standard JSON Schema (`~standard.jsonSchema`:
 * Zod 4, ArkType 2) where the library has it, else by the library's own converter
 * (`@valibot/to-json-schema`, an optional peer; ArkType's `toJsonSchema()`). `exact` is false when
 * the direction asked for could not be said (a transform's output) and the input shape stands in.
 */
function derive(schema: StandardSchemaV1, direction: Direction): { schema: JsonSchema; exact: boolean } | undefined {
  if ('pageItem' in schema) {
    const item = derive((schema as StandardPage).pageItem, direction);
    return item && { schema: pageSchema(item.schema), exact: item.exact };
  }
  const props = schema['~standard'] as StandardSchemaV1.Props & Partial<StandardJsonSchemaProps>;
  // each way to say it, with whether it says the direction asked for (a response's shape prunes replies only then)
  const attempts: [() => unknown, exact: boolean][] = [];
  if (props.jsonSchema !== undefined) {
    const { jsonSchema } = props;
    // a part JSON Schema cannot hold (Zod's z.date()) left open (`{}`) rather than the whole slot undocumented
    const lenient = { target: TARGET, libraryOptions: { unrepresentable: 'any' } };
    attempts.push([() => jsonSchema[direction]({ target: TARGET }), true], [() => jsonSchema[direction](lenient), true]);
    if (direction === 'output') attempts.push([() => jsonSchema.input(lenient), false]);
  } else if (props.vendor === 'valibot') {
    const convert = valibotConverter();
    if (convert !== undefined) {
      attempts.push([() => convert(schema, { target: TARGET, typeMode: direction, errorMode: 'throw' }), true]);
      attempts.push([() => convert(schema, { target: TARGET, typeMode: 'input', errorMode: 'ignore' }), false]);
    }
  } else if (typeof (schema as { toJsonSchema?: unknown }).toJsonSchema === 'function') {
    attempts.push([() => (schema as unknown as { toJsonSchema(): unknown }).toJsonSchema(), direction === 'input']);
  }
  for (const [attempt, exact] of attempts) {
    try {
      const out = attempt();
      if (isRecord(out)) return { schema: withoutDialect(out), exact };
    } catch {
      // JSON Schema cannot say this direction (a transform, a custom check): try the next way
    }
  }
  return undefined;
}

type ValibotConvert = (schema: unknown, options: Record<string, unknown>) => unknown;
let valibot: ValibotConvert | null | undefined;

/** `@valibot/to-json-schema`'s `toJsonSchema`, required on first use; `undefined` when it is not installed. */
function valibotConverter(): ValibotConvert | undefined {
  if (valibot === undefined) {
    try {
      valibot = (createRequire(import.meta.url)('@valibot/to-json-schema') as { toJsonSchema: ValibotConvert }).toJsonSchema;
    } catch {
      valibot = null;
    }
  }
  return valibot ?? undefined;
}

/** The schema without its `$schema`: the document and the serializer read every schema as draft 2020-12. */
function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
