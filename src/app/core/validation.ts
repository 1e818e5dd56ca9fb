import { Ajv, type ErrorObject, type Options, type ValidateFunction, ValidationError } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createError } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import { addFormats } from '../../utils/ajv-formats.ts';
import { isRecord } from '../../utils/is-record.ts';
import type { StandardSchemaV1 } from '../../utils/standard-schema.ts';
import type { Ctx } from './ctx.ts';
import type { JsonSchema, Route } from './route.ts';
import type { RequestPart, ResolvedSchema, RouteSchemas } from './route-schemas.ts';
import draft07 from './schema-meta-validator.ts';
import draft2020 from './schema-meta-validator-2020.ts';

type Dialect = '2020-12' | 'draft-07';

function makeAjv(dialect: Dialect, options: Options): Ajv {
  const Class = dialect === 'draft-07' ? Ajv : Ajv2020;
  const ajv = new Class({ allErrors: true, strict: false, allowUnionTypes: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Params, query and headers arrive as strings and are coerced, as in Fastify; bodies are not.
 * Schemas are draft 2020-12 (OpenAPI 3.1's dialect: `prefixItems`, `unevaluatedProperties`,
 * `dependentRequired`, `$defs`), or draft-07 when their `$schema` says so. Each instance is made on
 * first use: a service without body schemas never makes one for them. None checks schemas against
 * the meta-schema itself: `checkSchema` does, once for all.
 */
const instances = new Map<string, Ajv>();
function ajvFor(dialect: Dialect, coerce: boolean): Ajv {
  const key = `${dialect} ${coerce}`;
  let ajv = instances.get(key);
  if (ajv === undefined) {
    ajv = makeAjv(dialect, { coerceTypes: coerce ? 'array' : false, useDefaults: true, validateSchema: false });
    instances.set(key, ajv);
  }
  return ajv;
}
let metaAjv: Ajv | undefined;

/**
 * Refuses a schema that is not valid JSON Schema, with ajv's own check and
 * message. Compiling the meta-schema's validator was most of what a worker's
 * start-up spent in ajv (≈70 ms of CPU): for draft 2020-12, the default, and
 * draft-07 the check runs ajv's code generated ahead of time
 * (`schema-meta-validator*.ts`, from tools/validators.ts); a schema naming
 * another `$schema` is checked by an ajv instance made on first use.
 */
function checkSchema(schema: JsonSchema, route: Route, part: string): void {
  const reason = metaProblems(schema);
  if (reason !== undefined) throw createError('FLO_ERR_BAD_SCHEMA', { route: routeName(route), part, reason });
}

/** ajv's `errorsText()` of the schema checked against its meta-schema; `undefined` when it is valid. */
export function metaProblems(schema: JsonSchema): string | undefined {
  const validate = metaValidator(dialectOf(schema), schema['$schema']);
  if (validate === undefined) {
    metaAjv ??= makeAjv('2020-12', { code: { optimize: false } });
    return metaAjv.validateSchema(schema) ? undefined : metaAjv.errorsText();
  }
  return validate(schema) ? undefined : errorsText(validate.errors);
}

const DRAFT_07 = /^http:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020_12 = /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/** The dialect a schema is validated in: draft-07 when its `$schema` says so, else 2020-12. */
function dialectOf(schema: JsonSchema): Dialect {
  const declared = schema['$schema'];
  return typeof declared === 'string' && DRAFT_07.test(declared) ? 'draft-07' : '2020-12';
}

/** The generated meta-schema validator for a schema's `$schema` (none, draft-07 or 2020-12); `undefined` for another. */
function metaValidator(dialect: Dialect, declared: unknown): ValidateFunction | undefined {
  if (dialect === 'draft-07') return draft07 as ValidateFunction;
  if (declared === undefined || (typeof declared === 'string' && DRAFT_2020_12.test(declared))) return draft2020 as ValidateFunction;
  return undefined;
}

/** ajv's `errorsText` with its defaults. */
function errorsText(errors: ValidateFunction['errors']): string {
  if (!errors || errors.length === 0) return 'No errors';
  return errors.map((e) => `data${e.instancePath} ${e.message}`).join(', ');
}

function routeName(route: Route): string {
  return `${route.method} ${route.path}`;
}

export interface ValidationIssue {
  in: RequestPart;
  path: string;
  message: string;
  /** The JSON Schema keyword that failed (`required`, `minLength`…): the key of its translation; `schema` for a library's issue (its message stands). */
  keyword: string;
  /** The keyword's parameters (`limit`, `missingProperty`…). */
  params: Record<string, unknown>;
}

/** Validates the parts of a request a route declares schemas for; a promise when an asynchronous schema has to be awaited. */
export interface RequestValidator {
  /** Params, query string, headers and cookies: checked before the middlewares run; undefined when the route declares none of them. */
  readonly head: ((ctx: Ctx) => void | Promise<void>) | undefined;
  /** The body: checked right before the handler. */
  body(ctx: Ctx): void | Promise<void>;
}

const NONE: RequestValidator = { head: undefined, body() {} };

/**
 * One part's check: the value to keep (ajv coerces in place and keeps the value; a library returns
 * its output, transforms applied), or a promise of it; on failure its issues are added.
 */
type Check = (value: unknown, issues: ValidationIssue[]) => unknown;

/** Compiles a route's schemas once, at registration; an invalid schema fails registration. */
export function compileValidator(route: Route, schemas: RouteSchemas): RequestValidator {
  const s = schemas.request;
  // a form's values (and a buffered multipart body's fields) are strings, coerced like a query string's
  const fields = route.body === 'form' || route.body === 'multipart';
  const params = compile(s.params, true, route, 'params');
  const query = compile(s.querystring, true, route, 'querystring', route.paginated !== undefined);
  const headers = compile(s.headers, true, route, 'headers');
  const cookies = compile(s.cookies, true, route, 'cookies');
  const body = compile(s.body, fields, route, 'body');
  if (!params && !query && !headers && !cookies && !body) return NONE;
  const head = (ctx: Ctx): void | Promise<void> => {
    const issues: ValidationIssue[] = [];
    let pending: Promise<unknown>[] | undefined;
    if (params) pending = keep(ctx, 'params', params(ctx.params, issues), pending);
    if (query) pending = keep(ctx, 'querystring', query(ctx.query, issues), pending);
    if (headers) pending = keep(ctx, 'headers', headers(ctx.headers, issues), pending);
    // a copy: coercion is for the check only, `ctx.cookies.get` reads the strings as sent
    if (cookies) pending = keep(ctx, 'cookies', cookies({ ...ctx.cookies.all() }, issues), pending);
    if (pending === undefined) {
      if (issues.length > 0) throw failed(issues);
      return;
    }
    return Promise.all(pending).then(() => {
      if (issues.length > 0) throw failed(issues);
    });
  };
  return {
    head: params || query || headers || cookies ? head : undefined,
    body(ctx) {
      if (!body) return;
      const issues: ValidationIssue[] = [];
      const multipart = route.body === 'multipart';
      const value = multipart ? (ctx.body as { fields?: unknown } | undefined)?.fields : ctx.body;
      const set = (out: unknown) => {
        if (issues.length > 0) throw failed(issues);
        if (multipart) (ctx.body as { fields?: unknown }).fields = out;
        else ctx.body = out as Ctx['body'];
      };
      const out = body(value, issues);
      return out instanceof Promise ? out.then(set) : set(out);
    },
  };
}

/** Keeps a checked value (a promise of it joins `pending`), with no closure on the synchronous path. */
function keep(ctx: Ctx, part: RequestPart, out: unknown, pending: Promise<unknown>[] | undefined): Promise<unknown>[] | undefined {
  if (!(out instanceof Promise)) {
    assign(ctx, part, out);
    return pending;
  }
  const kept = out.then((value) => assign(ctx, part, value));
  return pending === undefined ? [kept] : [...pending, kept];
}

function assign(ctx: Ctx, part: RequestPart, value: unknown): void {
  if (part === 'params') ctx.params = value as Ctx['params'];
  else if (part === 'querystring') ctx.query = value as Ctx['query'];
  // a library's output (its coercions) replaces the header values, as ajv's coercion does in place
  else if (part === 'headers' && value !== ctx.headers && isRecord(value)) Object.assign(ctx.req.headers, value);
}

function compile(schema: ResolvedSchema | undefined, coerce: boolean, route: Route, part: RequestPart, paged = false): Check | undefined {
  if (schema === undefined) return undefined;
  if (schema.kind === 'standard') return paged ? pagedQuery(standardCheck(schema.standard, part)) : standardCheck(schema.standard, part);
  let json = schema.json;
  checkSchema(json, route, part);
  if (paged) json = withPageParams(json);
  let validate: ValidateFunction;
  try {
    validate = ajvFor(dialectOf(json), coerce).compile(json);
  } catch (error) {
    // valid JSON Schema that ajv still cannot compile: an unknown format, an unresolvable $ref…
    throw createError('FLO_ERR_BAD_SCHEMA', { route: routeName(route), part, reason: (error as Error).message }, { cause: error });
  }
  return (value, issues) => {
    const valid = validate(value) as boolean | Promise<unknown>;
    // `$async: true`: ajv's validator returns a promise, rejected with its errors
    if (valid instanceof Promise) {
      return valid.then(
        () => value,
        (error: unknown) => {
          if (!(error instanceof ValidationError)) throw error;
          ajvIssues(error.errors as ErrorObject[], part, issues);
          return value;
        },
      );
    }
    if (!valid) ajvIssues(validate.errors, part, issues);
    return value;
  };
}

/**
 * A paginated route's library query schema: `page` and `limit` are `parsePagination`'s to check, so
 * the library sees the query without them (a strict object would refuse them, a stripping one drop
 * them) and they are put back in its output.
 */
function pagedQuery(check: Check): Check {
  const restore = (out: unknown, page: unknown, limit: unknown) => {
    if (!isRecord(out)) return out;
    const kept: Record<string, unknown> = { ...out };
    if (page !== undefined) kept['page'] = page;
    if (limit !== undefined) kept['limit'] = limit;
    return kept;
  };
  return (value, issues) => {
    const { page, limit, ...rest } = value as Record<string, unknown>;
    const out = check(rest, issues);
    return out instanceof Promise ? out.then((o) => restore(o, page, limit)) : restore(out, page, limit);
  };
}

function ajvIssues(errors: ErrorObject[] | null | undefined, where: RequestPart, issues: ValidationIssue[]): void {
  for (const e of errors ?? []) {
    // a `const` value (an expected token, say) is the schema's secret to keep: the message says enough
    const { allowedValue: _hidden, ...params } = e.params as Record<string, unknown>;
    issues.push({ in: where, path: pathOf(e), message: e.message ?? 'is invalid', keyword: e.keyword, params });
  }
}

/** A Standard Schema's check: the library validates (synchronously, or through the promise it returns). */
function standardCheck(schema: StandardSchemaV1, where: RequestPart): Check {
  const validate = schema['~standard'].validate;
  // a failed check keeps the value as it came: the 400 is thrown before anything reads it
  const settle = (result: StandardSchemaV1.Result<unknown>, value: unknown, issues: ValidationIssue[]) => {
    if (result.issues === undefined) return result.value;
    for (const issue of result.issues)
      issues.push({ in: where, path: pointer(issue.path), message: issue.message, keyword: 'schema', params: {} });
    return value;
  };
  return (value, issues) => {
    const result = validate(value);
    return result instanceof Promise ? result.then((r) => settle(r, value, issues)) : settle(result, value, issues);
  };
}

/** A library issue's path as a JSON pointer (`['items', 0, 'name']` → `/items/0/name`; none → `/`). */
export function pointer(path: StandardSchemaV1.Issue['path']): string {
  if (path === undefined || path.length === 0) return '/';
  let out = '';
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    out += `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;
  }
  return out;
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
