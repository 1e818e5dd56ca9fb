/**
 * The data set and the framework-neutral helpers every contender shares: the
 * 10 000 items, the pagination rules (the same as flotilla's
 * `parsePagination`), the problem bodies and the logger options (the same as
 * flotilla's own logger). Nothing here imports flotilla, so the other
 * contenders do not load it.
 */

export interface Item {
  id: number;
  sku: string;
  name: string;
  category: string;
  price: number;
  stock: number;
}

export interface Page<T> {
  data: T[];
  total: number;
  page: number;
  limit: number;
  total_pages: number;
}

/** The origin every load request carries, and the one origin every contender allows. */
export const ORIGIN = 'http://localhost:8080';
export const CORS_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];
export const EXPOSED_HEADERS = ['X-Request-Id'];
/**
 * The security headers flotilla sends on every reply by default (`securityHeaders`): the other
 * contenders send them too, set the way a user of each would (a hook, a middleware), so that the
 * comparison stays one of the same work.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
/** flotilla's `compression` defaults, given to Fastify's `@fastify/compress`. */
export const COMPRESSION_THRESHOLD = 1024;
/** flotilla's `HTTP_DURATION_BUCKETS`. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
export const ITEM_COUNT = 10_000;
/** The scrape benchmark's service (metrics-routes.ts): routes `/m0` … `/m49`, each answering these statuses. */
export const METRIC_ROUTES = 50;
export const METRIC_STATUSES = [200, 400, 404, 500] as const;

const CATEGORIES = ['books', 'music', 'garden', 'kitchen', 'toys', 'tools', 'outdoor', 'office'];
const WORDS = ['Amber', 'Basalt', 'Cedar', 'Delta', 'Ember', 'Fjord', 'Granite', 'Harbor', 'Indigo', 'Juniper', 'Kestrel', 'Lumen'];

/** A deterministic list of `count` items with six fields each. */
export function makeItems(count: number): Item[] {
  let seed = 7;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed;
  };
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    sku: `SKU-${String(i + 1).padStart(6, '0')}`,
    name: `${WORDS[next() % WORDS.length]} ${WORDS[next() % WORDS.length]} ${next() % 1000}`,
    category: CATEGORIES[next() % CATEGORIES.length]!,
    price: (next() % 100_000) / 100,
    stock: next() % 500,
  }));
}

export const ITEMS: readonly Item[] = makeItems(ITEM_COUNT);
const BY_ID = new Map(ITEMS.map((item) => [item.id, item]));

export function pageOf(page: number, limit: number): Page<Item> {
  const start = (page - 1) * limit;
  return { data: ITEMS.slice(start, start + limit), total: ITEMS.length, page, limit, total_pages: Math.ceil(ITEMS.length / limit) };
}

export function itemById(id: number): Item | undefined {
  return BY_ID.get(id);
}

/** An error the non-flotilla contenders turn into a problem response. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, detail: string) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

/** The pagination rules of flotilla's `parsePagination`, for the other contenders. */
export function parsePage(query: Record<string, unknown>): { page: number; limit: number } {
  const page = positive(query, 'page') ?? 1;
  const limit = Math.min(positive(query, 'limit') ?? 20, 100);
  if (!Number.isSafeInteger((page - 1) * limit)) throw new HttpProblem(400, 'INVALID_PAGINATION', "query parameter 'page' is too large");
  return { page, limit };
}

function positive(query: Record<string, unknown>, name: 'page' | 'limit'): number | undefined {
  const value = Object.hasOwn(query, name) ? query[name] : undefined;
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' && /^[0-9]+$/.test(value) && Number(value) > 0) return Number(value);
  throw new HttpProblem(400, 'INVALID_PAGINATION', `query parameter '${name}' must be a positive integer`);
}

/** An RFC 9457 body shaped like flotilla's. */
export function problemBody(status: number, code: string, detail: string, instance: string, requestId: string): string {
  const type = `urn:flotilla:problem:${code.toLowerCase().replaceAll('_', '-')}`;
  return JSON.stringify({ type, title: code, status, detail, instance, code, requestId });
}

/** The status and code of anything thrown at a non-flotilla contender. */
export function problemOf(error: unknown): { status: number; code: string; detail: string } {
  if (error instanceof HttpProblem) return { status: error.status, code: error.code, detail: error.message };
  return { status: 500, code: 'INTERNAL', detail: 'internal error' };
}

/** The path part of a URL. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The port a server script listens on: argv[2], else `PORT`, else 3000. */
export function portArg(): number {
  return Number(process.argv[2] ?? process.env['PORT'] ?? 3000);
}

/** The line the orchestrator waits for, on stderr (stdout carries the logs). */
export function announce(port: number): void {
  process.stderr.write(`ready ${port}\n`);
}
