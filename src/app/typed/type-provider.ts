import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * Turns a route's schemas into TypeScript types, as Fastify's type providers
 * do: flotilla sets `schema`, the provider computes `output` from it (the type
 * of a value the schema validated: what `ctx.params`, `ctx.query`,
 * `ctx.headers` and `ctx.body` hold) and, when it declares one, `reply` (what a
 * handler may return for a response schema; `output` otherwise). The default
 * is {@link JsonSchemaToTs}; `withTypeProvider<P>()` picks another.
 *
 * @example
 * import type { Static, TSchema } from '@sinclair/typebox';
 * interface TypeBoxProvider extends TypeProvider {
 *   output: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
 * }
 * const { defineRoute } = withTypeProvider<TypeBoxProvider>();
 */
export interface TypeProvider {
  /** The schema being typed; set by flotilla. */
  readonly schema: unknown;
  /** The type of a value the schema validated; `unknown` when the provider cannot type the schema. */
  readonly output: unknown;
}

/**
 * The default type provider: plain JSON Schema objects written `as const` (or
 * passed straight to `defineRoute`), typed by json-schema-to-ts's `FromSchema`.
 * Validated values have the schema's defaults (ajv applies them); replies may
 * leave defaulted properties out. A schema whose type TypeScript only knows as
 * `Record<string, unknown>` (not a literal) types nothing: `unknown`.
 *
 * @example
 * const Book = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;
 * type Book = SchemaType<typeof Book>; // { [x: string]: unknown; id: number }
 */
export interface JsonSchemaToTs extends TypeProvider {
  readonly output: JsonSchemaOutput<this['schema'], false>;
  readonly reply: JsonSchemaOutput<this['schema'], true>;
}

// `S extends JSONSchema`, tested here rather than required of a type parameter: inferring against
// json-schema-to-ts's schema type is too deep for TypeScript (TS2589), testing a known type is not
type JsonSchemaOutput<S, Reply extends boolean> = string extends keyof S
  ? unknown
  : S extends JSONSchema
    ? FromSchema<S, { keepDefaultedPropertiesOptional: Reply }>
    : unknown;

/**
 * The type of a value validated by schema `S`, as provider `P` computes it.
 *
 * @example
 * const NewBook = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] } as const;
 * type NewBook = SchemaType<typeof NewBook>; // { [x: string]: unknown; title: string }
 */
export type SchemaType<S, P extends TypeProvider = JsonSchemaToTs> = (P & { readonly schema: S })['output'];

/**
 * The type a handler may return for response schema `S`: the provider's `reply` when it declares one, else its `output`.
 *
 * @example
 * type Reply = ReplyType<typeof Book>; // properties with a `default` may be left out
 */
export type ReplyType<S, P extends TypeProvider = JsonSchemaToTs> = P extends { readonly reply: unknown }
  ? (P & { readonly schema: S })['reply']
  : (P & { readonly schema: S })['output'];
