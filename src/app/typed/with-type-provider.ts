import { type DefineRoute, defineRoute } from './define-route.ts';
import { type Paginated, paginated } from './paginated.ts';
import type { TypeProvider } from './type-provider.ts';

/**
 * `defineRoute` and `paginated` for schemas another type provider types, such
 * as `@sinclair/typebox` 0.x's (see {@link TypeProvider}; TypeBox 1.x and the
 * Standard Schema libraries need none: the default provider types them).
 * Type-level only: at run time both are the usual functions.
 *
 * @example
 * import { Type, type Static, type TSchema } from '@sinclair/typebox';
 * interface TypeBoxProvider extends TypeProvider { output: this['schema'] extends TSchema ? Static<this['schema']> : unknown }
 * const { defineRoute } = withTypeProvider<TypeBoxProvider>();
 * defineRoute({ method: 'GET', path: '/books/:id', schema: { params: Type.Object({ id: Type.Integer() }) }, handler: (ctx) => ctx.params.id });
 */
export function withTypeProvider<P extends TypeProvider>(): { defineRoute: DefineRoute<P>; paginated: Paginated<P> } {
  return { defineRoute: defineRoute as unknown as DefineRoute<P>, paginated: paginated as unknown as Paginated<P> };
}
