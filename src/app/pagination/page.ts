import { KError } from '../../errors/k-error.ts';
import type { JsonSchema } from '../../utils/json-schema.ts';

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

/**
 * The JSON Schema of `Page<T>` for items matching `item`.
 *
 * @example
 * pageSchema({ type: 'object', properties: { id: { type: 'integer' } } });
 */
export function pageSchema(item: JsonSchema): JsonSchema {
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
