import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { createError } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import { addFormats } from '../../utils/ajv-formats.ts';
import type { Ctx } from './ctx.ts';
import type { JsonSchema, Route } from './route.ts';
import draft07 from './schema-meta-validator.ts';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Params, query and headers arrive as strings and are coerced, as in Fastify; bodies are not.
 * Each instance is made on first use: a service without body schemas never makes the second.
 * Neither checks schemas against the meta-schema itself: `checkSchema` does, once for both.
 */
let coercingAjv: Ajv | undefined;
let exactAjv: Ajv | undefined;
let metaAjv: Ajv | undefined;
const coercing = () => (coercingAjv ??= makeAjv({ coerceTypes: 'array', useDefaults: true, validateSchema: false }));
const exact = () => (exactAjv ??= makeAjv({ coerceTypes: false, useDefaults: true, validateSchema: false }));

/**
 * Refuses a schema that is not valid JSON Schema, with ajv's own check and
 * message. Compiling the meta-schema's validator was most of what a worker's
 * start-up spent in ajv (≈70 ms of CPU): for draft-07, the default, the check
 * runs ajv's code generated ahead of time (`schema-meta-validator.ts`, from
 * tools/validators.ts); a schema naming another `$schema` is checked by
 * an ajv instance made on first use.
 */
function checkSchema(schema: JsonSchema, route: Route, part: SchemaPart): void {
  const reason = metaProblems(schema);
  if (reason !== undefined) throw createError('FLO_ERR_BAD_SCHEMA', { route: routeName(route), part, reason });
}

/** ajv's `errorsText()` of the schema checked against its meta-schema; `undefined` when it is valid. */
export function metaProblems(schema: JsonSchema): string | undefined {
  const declared = schema['$schema'];
  if (declared === undefined || (typeof declared === 'string' && DRAFT_07.test(declared))) {
    if (validateDraft07(schema)) return undefined;
    return errorsText(validateDraft07.errors);
  }
  metaAjv ??= makeAjv({ code: { optimize: false } });
  return metaAjv.validateSchema(schema) ? undefined : metaAjv.errorsText();
}

const DRAFT_07 = /^http:\/\/json-schema\.org\/draft-07\/schema#?$/;
const validateDraft07 = draft07 as ValidateFunction;

/** ajv's `errorsText` with its defaults. */
function errorsText(errors: ValidateFunction['errors']): string {
  if (!errors || errors.length === 0) return 'No errors';
  return errors.map((e) => `data${e.instancePath} ${e.message}`).join(', ');
}

type SchemaPart = 'params' | 'querystring' | 'headers' | 'cookies' | 'body';

function routeName(route: Route): string {
  return `${route.method} ${route.path}`;
}

export interface ValidationIssue {
  in: 'params' | 'querystring' | 'headers' | 'cookies' | 'body';
  path: string;
  message: string;
  /** The JSON Schema keyword that failed (`required`, `minLength`…): the key of its translation. */
  keyword: string;
  /** The keyword's parameters (`limit`, `missingProperty`…). */
  params: Record<string, unknown>;
}

/** Validates the parts of a request a route declares schemas for. */
export interface RequestValidator {
  /** Params, query string, headers and cookies: checked before the middlewares run. */
  head(ctx: Ctx): void;
  /** The body: checked right before the handler. */
  body(ctx: Ctx): void;
}

const NONE: RequestValidator = { head() {}, body() {} };

/** Compiles a route's schemas once, at registration; an invalid schema fails registration. */
export function compileValidator(route: Route): RequestValidator {
  const s = route.schema;
  let querystring = s?.querystring;
  if (querystring !== undefined && route.paginated !== undefined) querystring = withPageParams(querystring);
  const params = compile(coercing, s?.params, route, 'params');
  const query = compile(coercing, querystring, route, 'querystring');
  const headers = compile(coercing, s?.headers, route, 'headers');
  const cookies = compile(coercing, s?.cookies, route, 'cookies');
  // a form's values (and a buffered multipart body's fields) are strings, coerced like a query string's
  const fields = route.body === 'form' || route.body === 'multipart';
  const body = compile(fields ? coercing : exact, s?.body, route, 'body');
  if (!params && !query && !headers && !cookies && !body) return NONE;
  return {
    head(ctx) {
      const issues: ValidationIssue[] = [];
      if (params) check(params, ctx.params, 'params', issues);
      if (query) check(query, ctx.query, 'querystring', issues);
      if (headers) check(headers, ctx.headers, 'headers', issues);
      // a copy: coercion is for the check only, `ctx.cookies.get` reads the strings as sent
      if (cookies) check(cookies, { ...ctx.cookies.all() }, 'cookies', issues);
      if (issues.length > 0) throw failed(issues);
    },
    body(ctx) {
      if (!body) return;
      const issues: ValidationIssue[] = [];
      const value = route.body === 'multipart' ? (ctx.body as { fields?: unknown } | undefined)?.fields : ctx.body;
      check(body, value, 'body', issues);
      if (issues.length > 0) throw failed(issues);
    },
  };
}

function compile(ajv: () => Ajv, schema: JsonSchema | undefined, route: Route, part: SchemaPart): ValidateFunction | undefined {
  if (schema === undefined) return undefined;
  checkSchema(schema, route, part);
  try {
    return ajv().compile(schema);
  } catch (error) {
    // valid JSON Schema that ajv still cannot compile: an unknown format, an unresolvable $ref…
    throw createError('FLO_ERR_BAD_SCHEMA', { route: routeName(route), part, reason: (error as Error).message }, { cause: error });
  }
}

function check(validate: ValidateFunction, value: unknown, where: ValidationIssue['in'], issues: ValidationIssue[]): void {
  if (validate(value)) return;
  for (const e of validate.errors ?? []) {
    // a `const` value (an expected token, say) is the schema's secret to keep: the message says enough
    const { allowedValue: _hidden, ...params } = e.params as Record<string, unknown>;
    issues.push({ in: where, path: pathOf(e), message: e.message ?? 'is invalid', keyword: e.keyword, params });
  }
}

function pathOf(e: ErrorObject): string {
  if (e.keyword === 'required') return `${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === 'additionalProperties') return `${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}`;
  return e.instancePath === '' ? '/' : e.instancePath;
}

function failed(issues: ValidationIssue[]): KError {
  const first = issues[0]!;
  const where = first.in === 'body' ? 'body' : first.in;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return KError.of('VALIDATION_FAILED', `${where} ${first.path}: ${first.message}${more}`, { details: { errors: issues } });
}

/** `page` and `limit` are checked by parsePagination; a strict querystring schema must still let them through. */
function withPageParams(schema: JsonSchema): JsonSchema {
  const properties = (schema['properties'] as Record<string, unknown> | undefined) ?? {};
  return { ...schema, properties: { page: {}, limit: {}, ...properties } };
}
