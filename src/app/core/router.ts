import FindMyWay from 'find-my-way';
import { createError, describeValue } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import { isConnect } from '../../utils/connect-marker.ts';
import { hookDocsOf } from '../../utils/hook-docs.ts';
import { type BodyOptions, readBody, readJsonBody } from '../bodies/index.ts';
import { bodyOptionsProblem } from './body-options.ts';
import { ClientGoneError, clientGone } from './client-gone.ts';
import { compose, type RouteRun } from './compose.ts';
import type { Ctx, ResponseSerializer } from './ctx.ts';
import { checkHook, type HookChain } from './hooks.ts';
import { type RateLimitPolicy, rateLimitPolicy } from './rate-limit-policy.ts';
import { type Handler, HTTP_METHODS, type HttpMethod, joinPath, type Middleware, type Route } from './route.ts';
import { routeProblemsProblem } from './route-problems.ts';
import { type DocumentedRoute, documentedRoute, resolveRouteSchemas } from './route-schemas.ts';
import { compileSerializer } from './serializer.ts';
import type { Step } from './steps.ts';
import { compileValidator, type RequestValidator } from './validation.ts';

/** What a route declares, as its steps are made from it (see `RouteStepFactory`). */
export interface RouteFacts {
  readonly route: Route;
  readonly validator: RequestValidator;
  readonly run: RouteRun;
  /** The `onRequest` hooks: the App's, each enclosing group's, the route's own. */
  readonly hooks: HookChain;
  /** Writes its JSON replies by `schema.response`; `undefined` when it declares none (see serializer.ts). */
  readonly serializer: ResponseSerializer | undefined;
  /** The route's `timeoutMs`, else the App's `timeouts.handlerMs`; 0: none. */
  readonly timeoutMs: number;
  /** Whether the admission control may shed its requests (every route but the built-in `/health`). */
  readonly sheddable: boolean;
  /** A static mount's wildcard (see `RouteRegistration.mount`): it names no method for a 405's `Allow`. */
  readonly mount: boolean;
  /** Its rate limit (its own, else its group's or the App's); `undefined`: none, and nothing to pay. */
  readonly limit: RouteLimit | undefined;
}

/** What the pipeline needs of a matched route: its facts, and its steps, made once at registration. */
export interface RouteEntry extends RouteFacts {
  /** The built-in steps it has, in order, then its work (see `routeSteps`): what `runSteps` runs. */
  readonly steps: readonly Step[];
}

/** Makes a route's steps from its facts (the pipeline's `routeSteps`, with the App's step list). */
export type StepsOf = (route: RouteFacts) => readonly Step[];

/** How the App registers a route of its own (see `Router.add`). */
export interface RouteRegistration {
  /** The admission control never sheds it (`/health`). */
  exempt?: boolean;
  /** The rate limit of the group or App it is registered on, unless the route declares its own. */
  rateLimit?: RateLimitPolicy | false | undefined;
  /**
   * A wildcard route (`/assets/*`) serving a directory (`app.serveStatic`): a malformed URL below its
   * prefix names no file, and is the 404 of a path no route matches rather than the 400 `BAD_URL`; a
   * path it alone matches is a 404, not a 405, for another method (`POST /api/typo` beside a mount at `/`).
   */
  mount?: boolean;
}

/** Makes a route's {@link RouteLimit} from its policy and template (the App's, with its store and metrics). */
export type LimiterFactory = (policy: RateLimitPolicy, route: string) => RouteLimit;

export type Lookup =
  | { kind: 'found'; entry: RouteEntry; params: Record<string, string | undefined>; query: Record<string, unknown> }
  | { kind: 'miss'; error: KError };

const BAD_URL = Symbol('bad url');
const TOO_LONG = Symbol('param too long');
const noop = () => {};

/**
 * The route table on find-my-way: registration with safety checks, and
 * lookups that tell a missing route (404) from a wrong method (405).
 */
export class Router {
  readonly engine: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>;
  readonly #routes: DocumentedRoute[] = [];
  /** Each documented route's `onRequest` hooks, read when the document is built (see `documentedRoutes`). */
  readonly #chains: HookChain[] = [];
  readonly #autoHead = new Set<string>();
  /** The prefixes (with their final `/`) of the mounts (see `RouteRegistration.mount`). */
  readonly #mounts: string[] = [];
  readonly #bodyLimit: number;
  readonly #handlerMs: number;
  readonly #limiter: LimiterFactory | undefined;
  readonly #steps: StepsOf;
  #version = 0;

  constructor(options: { maxParamLength: number; bodyLimit: number; handlerMs?: number; limiter?: LimiterFactory; steps: StepsOf }) {
    this.#bodyLimit = options.bodyLimit;
    this.#handlerMs = options.handlerMs ?? 0;
    this.#limiter = options.limiter;
    this.#steps = options.steps;
    this.engine = FindMyWay({
      maxParamLength: options.maxParamLength,
      caseSensitive: true,
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      allowUnsafeRegex: false,
      onBadUrl: () => BAD_URL as never,
      onMaxParamLength: () => TOO_LONG as never,
    });
  }

  /** Registered routes with their full paths, in registration order (the automatic HEAD routes are left out). */
  get routes(): readonly DocumentedRoute[] {
    return this.#routes;
  }

  /**
   * The routes as the OpenAPI document reads them: {@link routes}, each with what its `onRequest`
   * hooks say of it (`guards`), as they stand now. Also tells, in `hooks`, how many hooks those are:
   * a cached document is stale once that changes.
   */
  documentedRoutes(): { routes: DocumentedRoute[]; hooks: number } {
    let hooks = 0;
    const routes = this.#routes.map((route, i) => {
      const guards = hookDocsOf(this.#chains[i] ?? []);
      hooks += guards.length;
      return guards.length === 0 ? route : { ...route, guards };
    });
    return { routes, hooks };
  }

  /** Increments on every registration; lets derived data (the OpenAPI document) know it is stale. */
  get version(): number {
    return this.#version;
  }

  add(
    route: Route,
    prefix = '',
    middlewares: readonly Middleware[] = [],
    hooks: HookChain = [],
    registration: RouteRegistration = {},
  ): void {
    if (typeof route !== 'object' || route === null) throw createError('FLO_ERR_BAD_ROUTE', { got: describeValue(route) });
    const full: Route = { ...route, path: joinPath(prefix, route.path) };
    checkRoute(full);
    const schemas = resolveRouteSchemas(full);
    const validator = compileValidator(full, schemas);
    const bodyLimit = route.bodyLimit ?? this.#bodyLimit;
    const key = `${full.method} ${full.path}`;
    const policy = route.rateLimit === undefined ? registration.rateLimit : rateLimitPolicy(route.rateLimit, key, `route ${key}`);
    const limit = policy === undefined || policy === false || this.#limiter === undefined ? undefined : this.#limiter(policy, full.path);
    // a `preHandler` limit is checked after the middlewares, the body and its validation: its key may read them
    const late = limit !== undefined && policy !== false && policy?.hook === 'preHandler';
    const own = late ? { ...route, handler: limitedHandler(limit, route.handler as Handler) } : route;
    const run = routeRun(own, [...middlewares, ...(route.middlewares ?? [])], validator, bodyLimit);
    const serializer = compileSerializer(full, schemas.response);
    const facts: RouteFacts = {
      route: full,
      validator,
      run,
      hooks: [...hooks, route.onRequest ?? []],
      serializer,
      timeoutMs: route.timeoutMs ?? this.#handlerMs,
      sheddable: registration.exempt !== true,
      mount: registration.mount === true,
      limit: late ? undefined : limit,
    };
    const entry: RouteEntry = { ...facts, steps: this.#steps(facts) };
    if (full.method === 'HEAD' && this.#autoHead.delete(key)) this.engine.off('HEAD', full.path);
    try {
      this.engine.on(full.method, full.path, noop, entry);
    } catch (error) {
      // find-my-way refuses a route already declared, and a pattern it cannot route (an unsafe regex, a misplaced wildcard…)
      const reason = (error as Error).message;
      throw createError(
        /already declared/.test(reason) ? 'FLO_ERR_ROUTE_CONFLICT' : 'FLO_ERR_BAD_PATTERN',
        { route: key, reason },
        { cause: error },
      );
    }
    if (full.method === 'GET' && !this.engine.hasRoute('HEAD', full.path)) {
      this.engine.on('HEAD', full.path, noop, entry);
      this.#autoHead.add(`HEAD ${full.path}`);
    }
    if (registration.mount === true && full.path.endsWith('/*')) this.#mounts.push(full.path.slice(0, -1));
    const documented = documentedRoute(full, schemas);
    // the limit in force, its own or inherited: the document's 429
    if (limit !== undefined && policy) documented.rateLimited = { max: policy.max, windowMs: policy.windowMs };
    this.#routes.push(documented);
    this.#chains.push(entry.hooks);
    this.#version++;
  }

  find(method: string, url: string): Lookup {
    const found = this.engine.find(method as HttpMethod, url);
    if (found !== null && found.store !== null) {
      return { kind: 'found', entry: found.store as RouteEntry, params: found.params, query: found.searchParams };
    }
    if (found !== null) {
      const marker = (found.handler as unknown as () => symbol)();
      if (marker === TOO_LONG) return miss(KError.of('PARAM_TOO_LONG', 'a route parameter is too long'));
      if (this.#mounts.length > 0 && this.#mounts.some((prefix) => url.startsWith(prefix))) return miss(notFound(method, url));
      return miss(KError.of('BAD_URL', 'the URL is malformed'));
    }
    const allow = HTTP_METHODS.filter((m) => {
      const entry = m === method ? undefined : (this.engine.find(m, url)?.store as RouteEntry | null | undefined);
      return entry !== undefined && entry !== null && !entry.mount;
    });
    if (allow.length > 0) {
      return miss(
        KError.of('METHOD_NOT_ALLOWED', `${method} is not allowed here; allowed: ${allow.join(', ')}`, {
          headers: { Allow: allow.join(', ') },
        }),
      );
    }
    return miss(notFound(method, url));
  }
}

function notFound(method: string, url: string): KError {
  return KError.of('ROUTE_NOT_FOUND', `no route for ${method} ${pathOnly(url)}`);
}

/**
 * The handler after reading the body the route declares (JSON by default, on its own fast path) and
 * validating it: after the middlewares, right before the handler. A client gone by then is not read
 * from: the handler does not run (`ClientGoneError`, which the pipeline answers with nothing).
 */
/** The handler behind its route's `preHandler` rate limit. */
function limitedHandler(limit: RouteLimit, handler: Handler): Handler {
  return (ctx) => {
    const counted = limit(ctx);
    return counted === undefined ? handler(ctx) : counted.then(() => handler(ctx));
  };
}

/**
 * A route's middlewares, body and handler as one step: the body read (and validated) just before
 * the handler, or, with `bodyBeforeMiddlewares` (the default under a `fromConnect` middleware),
 * before the middlewares. `GET` and `HEAD` read none.
 */
function routeRun(route: Route, middlewares: readonly Middleware[], validator: RequestValidator, limit: number): RouteRun {
  const handler = route.handler as Handler;
  if (route.method === 'GET' || route.method === 'HEAD') return compose(middlewares, handler);
  const read = bodyReader(route, validator, limit);
  if (route.bodyBeforeMiddlewares ?? middlewares.some(isConnect)) {
    const rest = compose(middlewares, handler);
    return (ctx) => read(ctx).then(() => rest(ctx));
  }
  return compose(middlewares, (ctx) => read(ctx).then(() => handler(ctx)));
}

/** Reads the request's body into `ctx.body` by the route's `body` kind, and validates it. */
function bodyReader(route: Route, validator: RequestValidator, limit: number): (ctx: Ctx) => Promise<void> {
  const kind = route.body ?? 'json';
  if (kind === 'json')
    return async (ctx) => {
      if (clientGone(ctx.res)) throw new ClientGoneError(true);
      ctx.body = await readJsonBody(ctx.req, limit);
      const checked = validator.body(ctx);
      if (checked !== undefined) await checked;
    };
  const options: BodyOptions = { kind, limit };
  if (route.mediaTypes !== undefined) options.mediaTypes = route.mediaTypes;
  if (route.form !== undefined) options.form = route.form;
  if (route.multipart !== undefined) options.multipart = route.multipart;
  return async (ctx) => {
    if (clientGone(ctx.res)) throw new ClientGoneError(true);
    ctx.body = await readBody(ctx.req, options, ctx.context().signal);
    validator.body(ctx);
  };
}

function miss(error: KError): Lookup {
  return { kind: 'miss', error };
}

function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return (q === -1 ? url : url.slice(0, q)).slice(0, 200);
}

/** Rejects malformed routes and dangerous patterns before find-my-way sees them. */
function checkRoute(route: Route): void {
  const where = `${String(route.method)} ${String(route.path)}`;
  if (!HTTP_METHODS.includes(route.method)) throw createError('FLO_ERR_BAD_METHOD', { route: where, methods: HTTP_METHODS.join(', ') });
  if (typeof route.path !== 'string' || !route.path.startsWith('/')) throw createError('FLO_ERR_BAD_PATH', { route: where });
  if (typeof route.handler !== 'function') throw createError('FLO_ERR_BAD_HANDLER', { route: where });
  const bodyProblem = bodyOptionsProblem(route);
  if (bodyProblem !== undefined) throw createError('FLO_ERR_BAD_BODY_OPTION', { route: where, reason: bodyProblem });
  for (const segment of route.path.split('/')) {
    const params = segment.replaceAll('::', '').match(/:/g)?.length ?? 0;
    if (params > 1) {
      const reason = `segment '${segment}' has ${params} parameters; use one parameter per path segment (multi-parameter segments such as '/:a-:b' are rejected)`;
      throw createError('FLO_ERR_BAD_PATTERN', { route: where, reason });
    }
  }
  for (const mw of route.middlewares ?? []) {
    if (typeof mw !== 'function') throw createError('FLO_ERR_BAD_MIDDLEWARE', { owner: `route ${where}` });
  }
  for (const hook of route.onRequest ?? []) checkHook(hook, `the onRequest of route ${where}`);
  const problems = routeProblemsProblem(route.problems);
  if (problems !== undefined) throw createError('FLO_ERR_BAD_ROUTE_OPTION', { route: where, reason: problems });
  const timeout = route.timeoutMs;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 0 && timeout <= MAX_TIMEOUT_MS)) {
    throw createError('FLO_ERR_BAD_ROUTE_OPTION', {
      route: where,
      reason: `timeoutMs must be an integer of ms in 0..${MAX_TIMEOUT_MS}, got ${describeValue(timeout)}`,
    });
  }
}

/** The largest `timeoutMs`, as `timeouts.handlerMs`'s: an hour. */
const MAX_TIMEOUT_MS = 3_600_000;

/**
 * A route's rate limit, run by the pipeline after the route is found (and the admission control let
 * the request in), before its `onRequest` hooks: nothing when the request is admitted (its reply gets
 * the `RateLimit-Policy` and `RateLimit` headers), a `RATE_LIMITED` 429 thrown when refused. A
 * promise when the count comes from elsewhere (the primary, the coordinator).
 */
export type RouteLimit = (ctx: Ctx) => void | Promise<void>;
