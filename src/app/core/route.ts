import type { IncomingHttpHeaders } from 'node:http';
import type { WebSocket } from 'ws';
import type { SecurityRequirement } from '../../config/security-requirements.ts';
import type { JsonSchema } from '../../utils/json-schema.ts';
import type { StandardSchemaV1 } from '../../utils/standard-schema.ts';
import type { BodyKind, FormLimits, MultipartOptions } from '../bodies/index.ts';
import type { Ctx, RequestState } from './ctx.ts';
import type { RateLimitOptions } from './rate-limit-policy.ts';
import type { RouteProblem } from './route-problems.ts';

/** HTTP methods a route may declare. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type { JsonSchema } from '../../utils/json-schema.ts';

/**
 * Onion-style middleware: code before `await next()` runs on the way in, code
 * after it on the way out. Not calling `next` ends the request: the middleware
 * must then respond (e.g. `ctx.ok(...)`) or throw. `Middleware<S>` declares
 * what it puts in `ctx.state`: a route listing it in its `middlewares` (with
 * `defineRoute`) reads those keys typed, and so do the routes of a group given
 * it (`app.group('/notes', authenticate)`, with `group.route` or `group.defineRoute`).
 *
 * @example
 * const timing: Middleware = async (ctx, next) => {
 *   const t0 = performance.now();
 *   await next();
 *   ctx.setHeader('Server-Timing', `app;dur=${performance.now() - t0}`);
 * };
 * const authenticate: Middleware<{ user: User }> = async (ctx, next) => {
 *   ctx.state.user = await users.fromToken(ctx.headers.authorization);
 *   await next();
 * };
 */
// a method's parameters are compared both ways: a Middleware<{ user: User }> is still a Middleware
export type Middleware<S extends object = object> = {
  middleware(
    ctx: Ctx<Record<string, unknown>, Record<string, unknown>, IncomingHttpHeaders, unknown, RequestState & S>,
    next: () => Promise<void>,
  ): unknown;
}['middleware'];

/** A route handler; a returned value (other than `undefined`) is sent as JSON. */
export type Handler = (ctx: Ctx) => unknown;

/**
 * An `onRequest` hook: runs once the route is found, before params, query and
 * headers are validated and before the body is read, so that an auth check
 * answers 401 before any detail of a bad request reaches an anonymous client.
 * It ends the request by throwing (a `KError` is its problem) or by choosing a
 * reply (`ctx.status(401).send(…)`, `ctx.ok(…)`); otherwise the request goes on.
 * App-level hooks also run for a path no route matches. `RequestHook<S>`
 * declares what it puts in `ctx.state`, as `Middleware<S>` does: given in a
 * group's options (`app.group('/notes', { onRequest: [loadUser] })`), it types
 * the state of the group's routes.
 *
 * @example
 * app.onRequest((ctx) => { if (ctx.headers.authorization !== expected) throw KError.unauthorized('who are you?') });
 * const loadUser: RequestHook<{ user: User }> = async (ctx) => {
 *   ctx.state.user = await users.fromToken(ctx.headers.authorization);
 * };
 */
// a method's parameters are compared both ways: a RequestHook<{ user: User }> is still a RequestHook
export type RequestHook<S extends object = object> = {
  hook(ctx: Ctx<Record<string, unknown>, Record<string, unknown>, IncomingHttpHeaders, unknown, RequestState & S>): void | Promise<void>;
}['hook'];

/**
 * Maps an error to what the client gets, before the default boundary turns it
 * into a problem: return a `KError` (or any error) to send that instead, choose
 * a reply on `ctx`, or return `undefined` to leave the error as it is. It runs
 * at most once per request; an error thrown inside it becomes the default 500.
 *
 * @example
 * app.setErrorHandler((error) => (error instanceof NotInStock ? KError.conflict(error.message) : undefined));
 */
export type ErrorHandler = (error: unknown, ctx: Ctx) => unknown;

/**
 * Answers a path no route matches (after the App-level `onRequest` hooks), like
 * a handler: its returned value is sent as JSON, with status 404 unless it sets another.
 *
 * @example
 * app.setNotFoundHandler((ctx) => ({ error: 'nothing here', path: ctx.path }));
 */
export type NotFoundHandler = (ctx: Ctx) => unknown;

/**
 * A schema slot's value: a JSON Schema (draft 2020-12 unless its `$schema` says draft-07), or any
 * Standard Schema (Zod, Valibot, ArkType…: a value with `~standard`), validated by its library.
 * Anything else is refused at registration (see route-schemas.ts).
 */
export type SlotSchema = JsonSchema | JsonSchemaInterface | StandardSchemaV1;

/**
 * A JSON Schema typed by an interface without an index signature (TypeBox 1's `TObject`, say):
 * any object type that has one of JSON Schema's words.
 */
export interface JsonSchemaInterface {
  readonly type?: unknown;
  readonly properties?: unknown;
  readonly items?: unknown;
  readonly $ref?: unknown;
  readonly anyOf?: unknown;
  readonly oneOf?: unknown;
  readonly allOf?: unknown;
  readonly enum?: unknown;
  readonly const?: unknown;
}

/** Schemas of a route, named as in Fastify: validated on each request and fed to OpenAPI. */
export interface RouteSchema {
  /** Route parameters (a JSON Schema's coerced from strings). */
  params?: SlotSchema;
  /** Query string (a JSON Schema's coerced from strings). */
  querystring?: SlotSchema;
  /** JSON request body. */
  body?: SlotSchema;
  /** Request headers (lower-case names; a JSON Schema's coerced from strings). */
  headers?: SlotSchema;
  /** Request cookies, as sent (strings, coerced for the check only; signed ones with their signature): read with `ctx.cookies.get`. */
  cookies?: SlotSchema;
  /** Response bodies by status code: what replies are checked against and shaped by, and what the document shows. */
  response?: Record<number | string, SlotSchema>;
}

/**
 * A route: method, path in find-my-way syntax, handler and metadata.
 *
 * @example
 * const route: Route = {
 *   method: 'GET', path: '/books/:id', summary: 'Get a book', tags: ['books'],
 *   schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } },
 *   handler: (ctx) => repo.get(ctx.params.id),
 * };
 */
export interface Route {
  method: HttpMethod;
  path: string;
  // a method: the typed handlers of `defineRoute` routes (a narrower `ctx`) are routes too
  // (optional only on a `websocket` route, whose plain GETs are answered 426 without one)
  handler?(ctx: Ctx): unknown;
  /**
   * Makes this `GET` route a WebSocket endpoint: an upgrade request goes through the route's
   * `onRequest` hooks, params and query validation and middlewares (a hook's 401 answers it, and no
   * upgrade happens), then the handshake completes and this runs with the open socket (a `ws`
   * WebSocket) and the request's `ctx`, which stays valid for the socket's life (its
   * `context().signal` aborts when the socket closes). `ctx.subscribe(topic)` subscribes the socket
   * to what `app.publish(topic, data)` sends. A plain `GET` runs `handler`, or is answered 426
   * without one. A throw or a rejection closes the socket with 1011.
   *
   * @example
   * { method: 'GET', path: '/feed', websocket: (socket, ctx) => { ctx.subscribe('books'); socket.on('message', (m) => …) } }
   */
  websocket?(socket: WebSocket, ctx: Ctx): void | Promise<void>;
  /** The subprotocols a `websocket` route speaks (`Sec-WebSocket-Protocol`): the first the client offers is selected; an offer of none of them is answered 400. */
  protocols?: string[];
  schema?: RouteSchema;
  /** Middlewares run after the group's, innermost last. */
  middlewares?: readonly Middleware[];
  /** `onRequest` hooks of this route, run after the App's and its groups'. */
  onRequest?: RequestHook[];
  summary?: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  deprecated?: boolean;
  /** Leave this route out of the OpenAPI document. */
  hide?: boolean;
  /**
   * What the operation requires, as OpenAPI Security Requirement objects naming the schemes of
   * `docs.securitySchemes` (`[{ apiKey: [] }]`; `[{ oauth: ['books:write'] }]`; `[]`: nothing). Any one
   * object of the list satisfies it. Left out, the group's applies, else the document's `docs.security`.
   * Documentation only: the check itself is the route's middleware or hook.
   */
  security?: readonly SecurityRequirement[];
  /**
   * The problems the handler (or the route's middlewares) may answer with, for the OpenAPI document:
   * registered codes (`'CONFLICT'`), `{ status, code, description }` for a code of the service's own,
   * or bare statuses (`409`). Each status becomes a problem response naming its codes. What flotilla
   * answers itself (validation, credentials, size, rate limits, overload…) is documented without it.
   * Documentation only: a `schema.response` of the same status wins.
   */
  problems?: readonly RouteProblem[];
  /** Largest accepted body for this route, in bytes (default: `limits.bodyBytes`). */
  bodyLimit?: number;
  /**
   * Read (and validate) the body before the middlewares run rather than after them, so that a
   * middleware can read `ctx.body` (and a `fromConnect` one `req.body`: passport-local). Default:
   * `true` when a middleware of the route (its own or its groups') is a `fromConnect` one, `false`
   * otherwise, so that an authentication middleware refuses a request before its body is read.
   */
  bodyBeforeMiddlewares?: boolean;
  /**
   * How long the route's work (its `onRequest` hooks, validation, middlewares, body and handler, up to
   * the head of its response) may run before the request is answered 503 `HANDLER_TIMEOUT` and
   * `ctx.context().signal` aborts with a `TimeoutError`, in ms (default: `timeouts.handlerMs`; `0`: no limit).
   * A streamed reply or an event stream is no longer timed once its head is sent.
   */
  timeoutMs?: number;
  /**
   * How the request body is read into `ctx.body` (default `json`): `text` (decoded per its charset),
   * `raw` (the exact bytes, a Buffer), `form` (urlencoded, validated by `schema.body`), `multipart`
   * (parts streamed one by one, or read whole with `multipart.buffer`), `stream` (the request itself).
   */
  body?: BodyKind;
  /** A `multipart` body's limits (files, file size, fields, field size), and `buffer: true` to get files as Buffers. */
  multipart?: MultipartOptions;
  /** A `form` body's field limit. */
  form?: FormLimits;
  /** The media types a `raw` or `stream` body accepts (`type/*` allowed; 415 for others); any when absent. */
  mediaTypes?: string[];
  /**
   * At most `max` requests per key (the client's address unless `key` says otherwise) in each window
   * of `windowMs`, counted by the whole cluster: more are answered 429 `RATE_LIMITED`. Overrides the
   * group's and the App's; `false`: none for this route.
   */
  rateLimit?: RateLimitOptions | false;
  /** `sse`: the handler answers with `ctx.sse(…)`; the document shows a `text/event-stream` response. */
  kind?: 'json' | 'sse';
  /** Set by `paginated()`: documents `page`/`limit` and the `Page<T>` envelope. */
  paginated?: { item: SlotSchema };
}

/** Joins a group prefix and a route path: `/api` + `/books` → `/api/books`, `/api` + `/` → `/api`. */
export function joinPath(prefix: string, path: string): string {
  if (prefix === '' || prefix === '/') return path;
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return path === '/' || path === '' ? p : `${p}${path}`;
}
