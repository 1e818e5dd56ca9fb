import type { IncomingHttpHeaders } from 'node:http';
import type { WebSocket } from 'ws';
import type { Ctx, RequestState } from '../core/ctx.ts';
import type { Middleware, Route } from '../core/route.ts';
import type { StateOf } from './declared-state.ts';
import type { NoSchemas, ParamsObject, PathParams, Scan, Simplify } from './path-params.ts';
import type { JsonSchemaToTs, ReplyType, SchemaType, TypeProvider } from './type-provider.ts';

export type { NoSchemas, PathParams } from './path-params.ts';

/**
 * The schemas a typed route may declare, as in {@link RouteSchema}: JSON Schema
 * objects (written `as const`, or inline in the `defineRoute` call), TypeBox 1
 * schemas, Standard Schemas (Zod, Valibot, ArkType…), or whatever another type
 * provider types.
 *
 * @example
 * const schema = { params: { type: 'object', properties: { id: { type: 'integer' } } } } as const satisfies RouteSchemas;
 */
export interface RouteSchemas {
  params?: object;
  querystring?: object;
  body?: object;
  headers?: object;
  cookies?: object;
  response?: { readonly [status: number | string]: object };
}

/** An object type without its index signatures: only the declared keys of a query or params schema can be read. */
type DeclaredKeys<T> = T extends unknown
  ? { [K in keyof T as string extends K ? never : number extends K ? never : symbol extends K ? never : K]: T[K] }
  : never;

/** The schema's type, or `Otherwise` when the provider cannot type it. */
type Typed<T, Otherwise> = unknown extends T ? Otherwise : T;

type ParamsOf<Path extends string, S, P extends TypeProvider> = S extends { readonly params: infer X }
  ? Typed<SchemaType<X, P>, never> extends infer Declared
    ? [Declared] extends [never]
      ? DefaultParams<Path>
      : string extends Path
        ? Simplify<DeclaredKeys<Declared>>
        : ParamsObject<Scan<Path>, DeclaredKeys<Declared>>
    : never
  : DefaultParams<Path>;

type DefaultParams<Path extends string> = string extends Path ? Record<string, unknown> : PathParams<Path>;

type QueryOf<S, P extends TypeProvider> = S extends { readonly querystring: infer X }
  ? Typed<SchemaType<X, P>, never> extends infer Q
    ? [Q] extends [never]
      ? Record<string, unknown>
      : Simplify<DeclaredKeys<Q>>
    : never
  : Record<string, unknown>;

// an intersection: a declared header reads as its schema says, any other as node:http has it
type HeadersOf<S, P extends TypeProvider> = S extends { readonly headers: infer X }
  ? Typed<SchemaType<X, P>, never> extends infer H
    ? [H] extends [never]
      ? IncomingHttpHeaders
      : IncomingHttpHeaders & Simplify<DeclaredKeys<H>>
    : never
  : IncomingHttpHeaders;

type BodyOf<S, P extends TypeProvider> = S extends { readonly body: infer X } ? SchemaType<X, P> : unknown;

/** The replies the `2xx` response schemas declare; `unknown` (anything) when there are none. */
export type SuccessReply<S, P extends TypeProvider> = S extends { readonly response: infer R }
  ? { [K in keyof R]: `${K & (string | number)}` extends `2${string}` ? ReplyType<R[K], P> : never }[keyof R] extends infer Reply
    ? [Reply] extends [never]
      ? unknown
      : Reply
    : never
  : unknown;

/**
 * The `ctx` a typed route's handler receives: params from the path and
 * `schema.params`, query, headers and body from their schemas, state from
 * `Base` (the service's {@link RequestState}, and what the route's group
 * declares) and the route's middlewares.
 *
 * @example
 * type C = RouteCtx<'/books/:id', { params: typeof IdParams }>; // C['params']: { id: number }
 */
export type RouteCtx<
  Path extends string,
  S = NoSchemas,
  M extends readonly Middleware<object>[] = [],
  P extends TypeProvider = JsonSchemaToTs,
  Base = RequestState,
> = Ctx<ParamsOf<Path, S, P>, QueryOf<S, P>, HeadersOf<S, P>, BodyOf<S, P>, StateOf<M, Base>>;

/**
 * What a typed handler may return: a reply matching one of the route's `2xx`
 * response schemas (anything when it declares none), `undefined` once it chose
 * its reply on `ctx` (`ctx.created(…)`), the `ctx` a chained call returns, or a
 * promise of these.
 *
 * @example
 * const get = (ctx: Ctx): HandlerResult<Book> => repo.get(Number(ctx.params['id']));
 */
export type HandlerResult<Reply> = unknown extends Reply
  ? unknown
  : // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing returns void (or a Promise<void>)
    Reply | ReturnedCtx | undefined | void | PromiseLike<Reply | ReturnedCtx | undefined | void>;

/** The `ctx` itself, as `ctx.status(204)` returns it: no reply of its own. */
type ReturnedCtx = Ctx<unknown, unknown, unknown, unknown, unknown>;

/**
 * A route as `defineRoute` takes it: a {@link Route} whose handler is typed from
 * its path, schemas and middlewares. `Reply` is what its handler must return
 * (`paginated()` sets it to the page); `Base` is the state before the route's
 * middlewares (a group's `route` and `defineRoute` set it to the group's).
 *
 * @example
 * const route: RouteDefinition<'/books/:id'> = { method: 'GET', path: '/books/:id', handler: (ctx) => ({ id: ctx.params.id }) };
 */
export interface RouteDefinition<
  Path extends string,
  S extends RouteSchemas = NoSchemas,
  M extends readonly Middleware<object>[] = [],
  P extends TypeProvider = JsonSchemaToTs,
  Reply = SuccessReply<S, P>,
  Base = RequestState,
> extends Omit<Route, 'path' | 'schema' | 'middlewares' | 'handler' | 'websocket'> {
  path: Path;
  schema?: S;
  /** Middlewares run after the group's, innermost last; a `Middleware<S>` adds `S` to this route's `ctx.state`. */
  middlewares?: M;
  // `Ctx<…>` spelled out rather than `RouteCtx<…>`: messages then show the types, not the schemas
  // optional only on a `websocket` route (see `Route.handler`)
  handler?(ctx: Ctx<ParamsOf<Path, S, P>, QueryOf<S, P>, HeadersOf<S, P>, BodyOf<S, P>, StateOf<M, Base>>): HandlerResult<Reply>;
  /** Makes this `GET` route a WebSocket endpoint (see `Route.websocket`), its `ctx` typed like the handler's. */
  websocket?(
    socket: WebSocket,
    ctx: Ctx<ParamsOf<Path, S, P>, QueryOf<S, P>, HeadersOf<S, P>, unknown, StateOf<M, Base>>,
  ): void | Promise<void>;
}

/**
 * What `defineRoute` returns: the same object, a {@link Route} for
 * `registerController`, its handler keeping its types.
 *
 * @example
 * const routes: Route[] = [defineRoute({ method: 'GET', path: '/books/:id', handler: (ctx) => ctx.params.id })];
 */
export interface TypedRoute<C extends Ctx = Ctx, R = unknown> extends Route {
  handler(ctx: C): R;
}

/** `defineRoute` for a type provider (see {@link withTypeProvider}). */
export type DefineRoute<P extends TypeProvider> = <
  const Path extends string,
  const S extends RouteSchemas = NoSchemas,
  const M extends readonly Middleware<object>[] = [],
>(
  route: RouteDefinition<Path, S, M, P>,
) => TypedRoute<RouteCtx<Path, S, M, P>, HandlerResult<SuccessReply<S, P>>>;

/**
 * A route whose handler is typed from its schemas: `ctx.params`, `ctx.query`,
 * `ctx.headers` and `ctx.body` from `schema.params` / `querystring` / `headers`
 * / `body` (JSON Schema written inline or `as const`, typed by json-schema-to-ts;
 * a TypeBox 1 schema as its `Static`; a Standard Schema, Zod's, Valibot's,
 * ArkType's, as its library's output, transforms applied), path parameters
 * without a schema as strings from the path, `ctx.state` from the route's
 * middlewares, and the returned value checked against the `2xx` response
 * schemas (a Standard Schema's input type). Only the query's and params'
 * declared keys can be read. At run time it returns its argument, unchanged.
 *
 * @example
 * const getBook = defineRoute({
 *   method: 'GET',
 *   path: '/books/:id',
 *   schema: { params: { type: 'object', properties: { id: { type: 'integer' } } }, response: { 200: Book } },
 *   handler: (ctx) => repo.get(ctx.params.id), // id: number; must return a Book (or undefined, or throw)
 * });
 * defineRoute({ method: 'GET', path: '/pages/:n', schema: { params: z.object({ n: z.coerce.number() }) }, handler: (ctx) => ctx.params.n }); // n: number
 */
export function defineRoute<
  const Path extends string,
  const S extends RouteSchemas = NoSchemas,
  const M extends readonly Middleware<object>[] = [],
>(route: RouteDefinition<Path, S, M>): TypedRoute<RouteCtx<Path, S, M>, HandlerResult<SuccessReply<S, JsonSchemaToTs>>> {
  return route as Route as TypedRoute<RouteCtx<Path, S, M>, HandlerResult<SuccessReply<S, JsonSchemaToTs>>>;
}
