import type { RequestState } from '../core/ctx.ts';

/**
 * What a `Middleware<S>` or a `RequestHook<S>` declares it puts in `ctx.state`: `S`, read from the
 * state of the `ctx` it takes; `never` for an untyped one. Distributes over a union of them.
 */
type AddedState<Each> = Each extends (ctx: infer C, ...rest: never) => unknown
  ? C extends { readonly state: RequestState & infer S }
    ? keyof S extends never
      ? never
      : S
    : never
  : never;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * What the middlewares and hooks `Each` (a union) declare together, intersected; `never` when none
 * of them declares anything.
 *
 * @example
 * type S = DeclaredState<typeof authenticate | typeof timing>; // { user: User }
 */
export type DeclaredState<Each> = [AddedState<Each>] extends [never] ? never : UnionToIntersection<AddedState<Each>>;

/**
 * `Base` with `Added`: `Base` itself when nothing is added (`never`, or an object type without keys),
 * `Added` itself when `Base` has no keys.
 *
 * @example
 * type S = WithState<RequestState, { user: User }>; // RequestState & { user: User }
 */
export type WithState<Base, Added> = [Added] extends [never]
  ? Base
  : keyof Added extends never
    ? Base
    : keyof Base extends never
      ? Added
      : Base & Added;

/**
 * The `ctx.state` of a route: `Base` (the service's {@link RequestState}, with what the route's
 * group declares) and what the route's middlewares `M` declare.
 *
 * @example
 * type S = StateOf<[typeof authenticate]>; // RequestState & { user: User }
 */
export type StateOf<M, Base = RequestState> = [M] extends [readonly (infer Each)[]] ? WithState<Base, DeclaredState<Each>> : Base;
