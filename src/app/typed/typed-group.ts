import type { RequestState } from '../core/ctx.ts';
import type { Group } from '../core/group.ts';
import type { GroupArgs } from '../core/registrar.ts';
import type { Middleware } from '../core/route.ts';
import type { DeclaredState, WithState } from './declared-state.ts';
import type { HandlerResult, RouteCtx, RouteDefinition, RouteSchemas, SuccessReply, TypedRoute } from './define-route.ts';
import type { NoSchemas } from './path-params.ts';
import type { JsonSchemaToTs } from './type-provider.ts';

/** The middlewares and the option hooks among `group(prefix, …)`'s arguments. */
type Declarers<Arg> = Arg extends (...args: never) => unknown
  ? Arg
  : Arg extends { readonly onRequest?: readonly (infer Hook)[] }
    ? Hook
    : never;

/**
 * What `group(prefix, …args)` adds to its routes' `ctx.state`: what its middlewares
 * (`Middleware<S>`) and the hooks of its `onRequest` option (`RequestHook<S>`) declare;
 * `never` when they declare nothing.
 *
 * @example
 * type S = GroupState<[{ onRequest: [typeof loadUser] }, typeof audit]>; // { user: User } & { audit: Audit }
 */
export type GroupState<Args extends readonly unknown[]> = DeclaredState<Declarers<Args[number]>>;

/**
 * A group whose routes are typed with its state: `State` is what the middlewares and the
 * `onRequest` option hooks of the group and of the groups around it declare (`{ user: User }`),
 * and every route registered with `route`, or defined with `defineRoute`, reads it in `ctx.state`,
 * over the service's {@link RequestState}, with its own middlewares' and its path and schemas typed
 * as `defineRoute` types them. `app.group(…)` returns one; a subgroup adds its own state. At run
 * time it is the {@link Group} itself: the typing costs nothing.
 *
 * `group.onRequest(hook)` adds a hook but cannot change the group's type: a hook that declares
 * state goes in the group's options (`{ onRequest: [loadUser] }`).
 *
 * @example
 * const notes = app.group('/notes', requireUser); // requireUser: Middleware<{ user: User }>
 * notes.route({ method: 'GET', path: '/:id', handler: (ctx) => repo.get(ctx.state.user.id, ctx.params.id) }); // user: User
 * const notesRoutes = (group: TypedGroup<{ user: User }>) => [group.defineRoute({ method: 'GET', path: '/', handler: (ctx) => repo.list(ctx.state.user.id) })];
 * notes.registerController({ routes: () => notesRoutes(notes) });
 */
export interface TypedGroup<State = object> extends Group {
  /** A subgroup: this group's state, and what its own middlewares and `onRequest` option hooks declare. */
  group<const Args extends GroupArgs>(prefix: string, ...args: Args): TypedGroup<WithState<State, GroupState<Args>>>;
  /** Registers a route under this group, its handler typed with the group's state (as by {@link defineRoute}). */
  route<const Path extends string, const S extends RouteSchemas = NoSchemas, const M extends readonly Middleware<object>[] = []>(
    route: GroupRoute<Path, S, M, State>,
  ): void;
  /** The route, typed as `route` types it, unregistered: for a controller's `routes()` (`registerController`). At run time, `route` itself. */
  defineRoute<const Path extends string, const S extends RouteSchemas = NoSchemas, const M extends readonly Middleware<object>[] = []>(
    route: GroupRoute<Path, S, M, State>,
  ): TypedRoute<RouteCtx<Path, S, M, JsonSchemaToTs, WithState<RequestState, State>>, HandlerResult<SuccessReply<S, JsonSchemaToTs>>>;
}

/** A route of a group of state `State`, as its `route` and `defineRoute` take it. */
type GroupRoute<Path extends string, S extends RouteSchemas, M extends readonly Middleware<object>[], State> = RouteDefinition<
  Path,
  S,
  M,
  JsonSchemaToTs,
  SuccessReply<S, JsonSchemaToTs>,
  WithState<RequestState, State>
>;

/**
 * The group `app.group(prefix, …args)` returns.
 *
 * @example
 * type Notes = GroupOf<[typeof requireUser]>; // TypedGroup<{ user: User }>
 */
export type GroupOf<Args extends readonly unknown[]> = TypedGroup<WithState<object, GroupState<Args>>>;
