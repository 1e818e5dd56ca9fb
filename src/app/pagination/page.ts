import { KError } from '../../errors/k-error.ts';
import type { JsonSchema } from '../../utils/json-schema.ts';
import type { StandardSchemaV1 } from '../../utils/standard-schema.ts';

/**
 * A page request: 1-based `page` and `limit` items per page.
 *
 * @example
 * const q: PageQuery = { page: 2, limit: 20 }; // items 21..40
 */
export interface PageQuery {
  page: number;
  limit: number;
}

/**
 * The paginated response envelope (JSON field names as written here).
 *
 * @example
 * const page: Page<Book> = newPage(books, 42, 1, 20); // page.total_pages === 3
 */
export interface Page<T> {
  data: T[];
  total: number;
  page: number;
  limit: number;
  total_pages: number;
}

/**
 * Defaults and bounds of the `page` and `limit` query parameters.
 *
 * @example
 * const q = { page: PAGE_DEFAULTS.page, limit: PAGE_DEFAULTS.limit };
 */
export const PAGE_DEFAULTS = Object.freeze({ page: 1, limit: 20, maxLimit: 100 });

/**
 * Builds a page envelope; `total_pages` is `ceil(total / limit)` (0 when there
 * is nothing, or when `limit` is not positive).
 *
 * @example
 * newPage(['a', 'b'], 21, 2, 20); // { data: ['a','b'], total: 21, page: 2, limit: 20, total_pages: 2 }
 */
export function newPage<T>(data: T[], total: number, page: number, limit: number): Page<T> {
  const totalPages = total > 0 && limit > 0 ? Math.ceil(total / limit) : 0;
  return { data, total, page, limit, total_pages: totalPages };
}

/**
 * The number of items to skip for a page: `(page - 1) * limit`.
 *
 * @example
 * offsetOf({ page: 3, limit: 20 }); // 40
 */
export function offsetOf(q: PageQuery): number {
  return (q.page - 1) * q.limit;
}

/**
 * Reads `page` (default 1) and `limit` (default 20, reduced to at most 100) from
 * a parsed query. A missing or empty value takes the default; anything that is
 * not a positive integer in plain decimal digits, a repeated parameter, or a
 * page whose offset passes `Number.MAX_SAFE_INTEGER` throws a 400
 * `INVALID_PAGINATION` KError naming the parameter. Throws nothing else.
 *
 * @example
 * parsePagination({ page: '2', limit: '500' }); // { page: 2, limit: 100 }
 * parsePagination({ page: 'abc' });             // throws KError 400 INVALID_PAGINATION
 */
export function parsePagination(query: Record<string, unknown>): PageQuery {
  const page = readPositiveInt(query, 'page') ?? PAGE_DEFAULTS.page;
  const limit = Math.min(readPositiveInt(query, 'limit') ?? PAGE_DEFAULTS.limit, PAGE_DEFAULTS.maxLimit);
  if (!Number.isSafeInteger(page) || BigInt(page - 1) * BigInt(limit) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalid('page', query, 'is too large');
  }
  return { page, limit };
}

/** The parameter as a positive number, `undefined` when absent or empty; may be unsafe or `Infinity` (digits only). */
function readPositiveInt(query: Record<string, unknown>, name: 'page' | 'limit'): number | undefined {
  const value = ownValue(query, name);
  if (value === undefined || value === '') return undefined;
  if (Array.isArray(value)) throw invalid(name, query, 'must be given at most once');
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) {
    const n = Number(value);
    if (n > 0) return n;
  } else if (typeof value === 'number' && Number.isInteger(value) && value > 0) {
    return value;
  }
  throw invalid(name, query, 'must be a positive integer');
}

/** An own property only: a polluted `Object.prototype.page` must not count as a query parameter. */
function ownValue(query: unknown, name: string): unknown {
  if (typeof query !== 'object' || query === null || !Object.hasOwn(query, name)) return undefined;
  return (query as Record<string, unknown>)[name];
}

function invalid(parameter: 'page' | 'limit', query: Record<string, unknown>, problem: string): KError {
  const value = jsonSafe(ownValue(query, parameter));
  return KError.of('INVALID_PAGINATION', `query parameter '${parameter}' ${problem}`, { details: { parameter, value } });
}

/** The offending value as it can appear in a JSON problem body. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : typeof v));
  return typeof value;
}

/** A `Page<T>` envelope whose items a Standard Schema validates (see `pageSchema`). */
export interface StandardPage extends StandardSchemaV1 {
  /** The items' schema: the OpenAPI document shows the page of its JSON Schema. */
  readonly pageItem: StandardSchemaV1;
}

const ENVELOPE = ['total', 'page', 'limit', 'total_pages'] as const;

/**
 * The envelope of a page whose items a Standard Schema (Zod, Valibot, ArkType…) validates: each
 * item by the library (its output is sent), the counts as `pageSchema`'s JSON Schema says.
 */
function standardPage(item: StandardSchemaV1): StandardPage {
  const validate = (value: unknown): StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>> => {
    const page = value as Record<string, unknown>;
    if (typeof value !== 'object' || value === null || !Array.isArray(page['data']))
      return { issues: [{ message: 'must be a page: { data: [...], total, page, limit, total_pages }', path: [] }] };
    const issues: StandardSchemaV1.Issue[] = [];
    for (const key of ENVELOPE) {
      const n = page[key];
      if (typeof n !== 'number' || !Number.isInteger(n) || n < (key === 'page' || key === 'limit' ? 1 : 0))
        issues.push({ message: 'must be a non-negative integer', path: [key] });
    }
    const results = (page['data'] as unknown[]).map((entry) => item['~standard'].validate(entry));
    const settle = (settled: StandardSchemaV1.Result<unknown>[]): StandardSchemaV1.Result<unknown> => {
      settled.forEach((r, i) => {
        for (const issue of r.issues ?? []) issues.push({ message: issue.message, path: ['data', i, ...(issue.path ?? [])] });
      });
      if (issues.length > 0) return { issues };
      const out: Record<string, unknown> = { data: settled.map((r) => (r as StandardSchemaV1.SuccessResult<unknown>).value) };
      for (const key of ENVELOPE) out[key] = page[key];
      return { value: out };
    };
    return results.some((r) => r instanceof Promise)
      ? Promise.all(results).then(settle)
      : settle(results as StandardSchemaV1.Result<unknown>[]);
  };
  return { pageItem: item, '~standard': { version: 1, vendor: 'flotilla', validate } };
}

/**
 * The JSON Schema of `Page<T>` for items matching `item`.
 *
 * @example
 * pageSchema({ type: 'object', properties: { id: { type: 'integer' } } });
 */
export function pageSchema(item: JsonSchema): JsonSchema;
export function pageSchema(item: StandardSchemaV1): StandardPage;
export function pageSchema(item: JsonSchema | StandardSchemaV1): JsonSchema | StandardPage;
export function pageSchema(item: JsonSchema | StandardSchemaV1): JsonSchema | StandardPage {
  if ('~standard' in item) return standardPage(item as StandardSchemaV1);
  return {
    type: 'object',
    required: ['data', 'total', 'page', 'limit', 'total_pages'],
    properties: {
      data: { type: 'array', items: item },
      total: { type: 'integer', minimum: 0, description: 'Total number of items' },
      page: { type: 'integer', minimum: 1, description: 'Current page number (1-based)' },
      limit: { type: 'integer', minimum: 1, maximum: PAGE_DEFAULTS.maxLimit, description: 'Page size' },
      total_pages: { type: 'integer', minimum: 0, description: 'ceil(total / limit)' },
    },
  };
}
