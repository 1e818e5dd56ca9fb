import type { SecurityRequirement } from '../../config/security-requirements.ts';
import { ERROR_CODES } from '../../errors/codes.ts';
import { STATUS_CODES } from '../../utils/node-http.ts';
import type { RouteProblem } from '../core/route-problems.ts';
import type { DocumentedRoute } from '../core/route-schemas.ts';
import type { OpenApiHeader, OpenApiResponse } from './openapi-types.ts';
import { problemResponse } from './problem-schema.ts';

/**
 * What the document knows of the App around a route: what decides the problems flotilla itself
 * answers it with.
 *
 * @example
 * const context: ProblemContext = { csrf: true, security: [], bodyBytes: 1_048_576, handlerMs: 0 };
 */
export interface ProblemContext {
  /** `csrf.enabled`: an unsafe method or a WebSocket upgrade may be refused 403 `CROSS_ORIGIN_REQUEST`. */
  readonly csrf: boolean;
  /** The document's default `security` (`docs.security`), for a route that declares none. */
  readonly security: readonly SecurityRequirement[] | undefined;
  /** `limits.bodyBytes`: a route's body limit unless it sets `bodyLimit`. */
  readonly bodyBytes: number;
  /** `timeouts.handlerMs`: a route's time limit unless it sets `timeoutMs` (0: none). */
  readonly handlerMs: number;
}

/** One reason for a status: its problem code, when one is known, and when it happens. */
interface Cause {
  code?: string;
  when?: string;
}

/** The problems of one status: their causes, and the headers they carry. */
interface StatusProblems {
  causes: Cause[];
  headers?: Record<string, OpenApiHeader>;
}

/** The request body an operation documents, as its problems read it: its media types. */
export interface BodyFacts {
  readonly mediaTypes: readonly string[];
}

/**
 * The problem responses of an operation, by status: those flotilla answers with itself (400 when
 * something of the request is checked, 401 and 403 when its security or a `jwtAuth` hook requires
 * credentials, 403 `CROSS_ORIGIN_REQUEST` on unsafe methods and WebSocket upgrades under `csrf`, 404, 413 and 415 when it
 * takes a body, 429 with its headers when a rate limit applies, 503 on every route) and those the
 * route declares (`problems`), merged by status, each naming its codes.
 *
 * @example
 * problemResponsesOf(route, context, undefined)['503']?.description; // 'Service Unavailable: `OVERLOADED` (…)'
 */
export function problemResponsesOf(
  route: DocumentedRoute,
  context: ProblemContext,
  body: BodyFacts | undefined,
): Record<string, OpenApiResponse> {
  const problems = new Map<number, StatusProblems>();
  const add = (status: number, cause: Cause = {}, headers?: Record<string, OpenApiHeader>) => {
    const entry = problems.get(status) ?? { causes: [] };
    // a code told already is not repeated, unless this cause says more of it
    if (!entry.causes.some((c) => c.code === cause.code && (cause.when === undefined || c.when === cause.when))) entry.causes.push(cause);
    if (headers !== undefined) entry.headers = { ...entry.headers, ...headers };
    problems.set(status, entry);
  };

  const s = route.schema;
  const checked = [s?.params, s?.querystring, s?.headers, s?.cookies, s?.body].some((part) => part !== undefined);
  if (checked) add(400, { code: 'VALIDATION_FAILED', when: 'the request failed validation: `details.errors` lists every failed check' });
  if (route.paginated !== undefined) add(400, { code: 'INVALID_PAGINATION', when: '`page` or `limit` is not a positive integer' });
  if (body !== undefined && (route.body ?? 'json') === 'json') add(400, { code: 'MALFORMED_JSON', when: 'the body is not JSON' });

  const security = route.security ?? context.security ?? [];
  if (route.guards?.some((g) => g.bearer)) {
    add(401, { code: 'UNAUTHORIZED', when: 'the bearer token is missing, invalid or expired; `WWW-Authenticate: Bearer`' });
  } else if (security.some((requirement) => Object.keys(requirement).length > 0)) {
    add(401, { code: 'UNAUTHORIZED', when: 'the credentials its security requires are missing or invalid' });
  }
  if (security.some((requirement) => Object.values(requirement).some((scopes) => scopes.length > 0))) {
    add(403, { code: 'FORBIDDEN', when: 'the credentials lack a scope or role its security requires' });
  }
  if (context.csrf && UNSAFE.has(route.method)) {
    add(403, { code: 'CROSS_ORIGIN_REQUEST', when: 'a browser sent it from another origin' });
  } else if (context.csrf && route.websocket !== undefined) {
    add(403, { code: 'CROSS_ORIGIN_REQUEST', when: 'a browser opened the WebSocket from another origin' });
  }
  add(404);
  if (body !== undefined) {
    add(413, { code: 'PAYLOAD_TOO_LARGE', when: `the body exceeds ${route.bodyLimit ?? context.bodyBytes} bytes` });
    add(415, { code: 'UNSUPPORTED_MEDIA_TYPE', when: `the body must be ${body.mediaTypes.join(' or ')}` });
  }
  const limit = route.rateLimited ?? ownLimit(route.rateLimit);
  if (limit !== undefined) {
    add(429, { code: 'RATE_LIMITED', when: `more than ${limit.max} requests in ${seconds(limit.windowMs)}` }, RATE_LIMIT_HEADERS);
  }
  add(503, { code: 'OVERLOADED', when: 'the service is past its capacity' }, { 'Retry-After': RETRY_AFTER });
  const timeoutMs = route.timeoutMs ?? context.handlerMs;
  if (timeoutMs > 0) add(503, { code: 'HANDLER_TIMEOUT', when: `the request ran longer than ${timeoutMs} ms` });

  for (const problem of route.problems ?? []) {
    const { status, cause } = declared(problem);
    add(status, cause);
  }

  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, { causes, headers }] of problems) {
    const response = problemResponse(describe(status, causes));
    responses[String(status)] =
      headers === undefined ? response : { description: response.description, headers, content: response.content };
  }
  return responses;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const RETRY_AFTER: OpenApiHeader = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'integer', minimum: 0 },
};

/** What a 429 of a rate limit carries (src/app/rate-limit/limiter.ts). */
const RATE_LIMIT_HEADERS: Record<string, OpenApiHeader> = {
  'Retry-After': { description: 'Seconds until the window ends', required: true, schema: RETRY_AFTER.schema },
  'RateLimit-Policy': {
    description: 'The limit: `"<name>";q=<requests>;w=<window, s>` (IETF RateLimit header fields)',
    required: true,
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'What is left of it: `"<name>";r=<remaining>;t=<seconds to its end>`',
    required: true,
    schema: { type: 'string' },
  },
};

/** A route's own `rateLimit` option as the document tells it (routes handed to `buildOpenApi` directly). */
function ownLimit(option: DocumentedRoute['rateLimit']): { max: number; windowMs: number } | undefined {
  return typeof option === 'object' && option !== null ? { max: option.max, windowMs: option.windowMs } : undefined;
}

function seconds(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s === 1 ? '1 second' : `${s} seconds`;
}

/** A declared problem's status and cause: a registered code's status, an object's, or a bare status. */
function declared(problem: RouteProblem): { status: number; cause: Cause } {
  if (typeof problem === 'number') return { status: problem, cause: {} };
  if (typeof problem === 'string') return { status: ERROR_CODES[problem].status, cause: { code: problem } };
  const cause: Cause = {};
  if (problem.code !== undefined) cause.code = problem.code;
  if (problem.description !== undefined) cause.when = problem.description;
  return { status: problem.status, cause };
}

/** `Conflict: \`CONFLICT\` (the book exists)`: the reason phrase, then each cause. */
function describe(status: number, causes: readonly Cause[]): string {
  const reason = STATUS_CODES[status] ?? 'Error';
  const told = causes
    .filter((c) => c.code !== undefined || c.when !== undefined)
    .map((c) => (c.code === undefined ? c.when : c.when === undefined ? `\`${c.code}\`` : `\`${c.code}\` (${c.when})`));
  return told.length === 0 ? reason : `${reason}: ${told.join(', ')}`;
}
