import type { JsonSchema } from '../../utils/json-schema.ts';
import type { Middleware, Route } from '../core/route.ts';
import { type Page, pageSchema } from '../pagination/page.ts';
import type { HandlerResult, RouteCtx, RouteDefinition, RouteSchemas, TypedRoute } from './define-route.ts';
import type { NoSchemas } from './path-params.ts';
import type { JsonSchemaToTs, ReplyType, TypeProvider } from './type-provider.ts';

/**
 * What a paginated route's handler returns: `Page<Item>` for an item schema the
 * type provider types (a JSON Schema `as const`, a TypeBox 1 schema, a Standard
 * Schema: its input type, what the library then shapes), anything otherwise.
 *
 * @example
 * const Book = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;
 * type Books = PageOf<typeof Book>; // Page<{ [x: string]: unknown; id: number }>
 */
export type PageOf<I, P extends TypeProvider = JsonSchemaToTs> =
  ReplyType<I, P> extends infer Item ? (unknown extends Item ? unknown : Page<Item>) : never;

/** `paginated` for a type provider (see {@link withTypeProvider}). */
export type Paginated<P extends TypeProvider> = <
  const Path extends string,
  I extends object,
  const S extends RouteSchemas = NoSchemas,
  const M extends readonly Middleware<object>[] = [],
>(
  route: RouteDefinition<Path, S, M, P, PageOf<NoInfer<I>, P>>,
  item: I,
) => TypedRoute<RouteCtx<Path, S, M, P>, HandlerResult<PageOf<I, P>>>;

/**
 * Marks a list route as paginated: the documentation gains the `page` and
 * `limit` query parameters, and `schema.response[200]` defaults to the
 * `Page<T>` envelope of `item`. Validation of `page`/`limit` stays with
 * `ctx.parsePagination()`. The route is typed as with `defineRoute`, and its
 * handler must return `Page<Item>` (or a promise of it) when `item` is a typed
 * schema (a JSON Schema `as const`, a TypeBox 1 schema, or a Zod, Valibot,
 * ArkType… schema).
 *
 * @example
 * paginated({ method: 'GET', path: '/books', handler: async (ctx) => repo.findAll(ctx.context(), ctx.parsePagination()) }, bookSchema);
 */
export function paginated<
  const Path extends string,
  // not `const`: an item schema is typed when written `as const`, an inline `{ type: 'object' }` stays untyped
  I extends object,
  const S extends RouteSchemas = NoSchemas,
  const M extends readonly Middleware<object>[] = [],
>(
  route: RouteDefinition<Path, S, M, JsonSchemaToTs, PageOf<NoInfer<I>>>,
  item: I,
): TypedRoute<RouteCtx<Path, S, M>, HandlerResult<PageOf<I>>> {
  const plain = route as Route;
  const schema = plain.schema ?? {};
  const itemSchema = item as JsonSchema;
  const marked: Route = {
    ...plain,
    paginated: { item: itemSchema },
    schema: { ...schema, response: { 200: pageSchema(itemSchema), ...schema.response } },
  };
  return marked as TypedRoute<RouteCtx<Path, S, M>, HandlerResult<PageOf<I>>>;
}
