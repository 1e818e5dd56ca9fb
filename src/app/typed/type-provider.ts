import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { StandardSchemaV1 } from '../../utils/standard-schema.ts';
import type { Simplify } from './path-params.ts';

/**
 * Turns a route's schemas into TypeScript types, as Fastify's type providers
 * do: flotilla sets `schema`, the provider computes `output` from it (the type
 * of a value the schema validated: what `ctx.params`, `ctx.query`,
 * `ctx.headers` and `ctx.body` hold) and, when it declares one, `reply` (what a
 * handler may return for a response schema; `output` otherwise). The default
 * is {@link JsonSchemaToTs}, which already types JSON Schema literals, Standard
 * Schemas (Zod, Valibot, ArkType…) and TypeBox 1 schemas; `withTypeProvider<P>()`
 * picks another (for `@sinclair/typebox` 0.x, say).
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
 * The default type provider; it types each kind of schema a slot takes, with no provider to write:
 *
 * - a Standard Schema (Zod 4, Valibot 1, ArkType 2…: a value with `~standard`) by its own types:
 *   `output` is the library's output type (after its transforms and coercions, `z.coerce.number()`
 *   is a `number`), as the library's `validate` hands it to the handler; `reply` is its input type,
 *   what the handler returns and the library turns into what is sent;
 * - a TypeBox 1.x schema (the `typebox` package: a plain JSON Schema object whose type carries
 *   TypeBox's `~kind` marks) as TypeBox's `Static` types it. flotilla does not import `typebox`,
 *   not even its types, so that its declarations still compile where `typebox` is not installed: it
 *   reads the same `~kind`, `~optional`, `~readonly` marks TypeBox's `Static` reads (see
 *   `TypeBoxStatic`). `Type.Cyclic`, `Type.Ref` and `Type.This` are not followed (`unknown`);
 *   a `Type.Codec` is its encoded (wire) type, which is what ajv validates;
 * - any other JSON Schema object written `as const` (or passed straight to `defineRoute`) by
 *   json-schema-to-ts's `FromSchema`. Validated values have the schema's defaults (ajv applies
 *   them); replies may leave defaulted properties out. A schema whose type TypeScript only knows as
 *   `Record<string, unknown>` (not a literal) types nothing: `unknown`.
 *
 * @example
 * const Book = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;
 * type Book = SchemaType<typeof Book>; // { [x: string]: unknown; id: number }
 * type Id = SchemaType<ReturnType<typeof z.coerce.number>>; // number (the output); ReplyType: unknown (the input)
 * const Author = Type.Object({ id: Type.Integer(), bio: Type.Optional(Type.String()) }); // typebox 1.x
 * type Author = SchemaType<typeof Author>; // { id: number; bio?: string }
 */
export interface JsonSchemaToTs extends TypeProvider {
  readonly output: SchemaOutput<this['schema'], false>;
  readonly reply: SchemaOutput<this['schema'], true>;
}

/**
 * The provider for `typebox` 1.x, for a project that names its provider:
 * `withTypeProvider<TypeBoxProvider>()`. The default provider already types
 * TypeBox 1 schemas (from the markers TypeBox itself reads), so this is the
 * default under the name a TypeBox project looks for; it imports nothing of
 * `typebox`, and a project without it type-checks unchanged.
 *
 * @example
 * import Type from 'typebox';
 * const { defineRoute } = withTypeProvider<TypeBoxProvider>();
 * defineRoute({ method: 'GET', path: '/a/:id', schema: { params: Type.Object({ id: Type.Integer() }) }, handler: (ctx) => ctx.params.id });
 */
export interface TypeBoxProvider extends JsonSchemaToTs {}

// a Standard Schema first: a library's schema is no JSON Schema, whatever its properties; a
// schema typed `any` types nothing (`unknown`), as a JSON Schema TypeScript cannot read
type SchemaOutput<S, Reply extends boolean> = 0 extends 1 & S
  ? unknown
  : S extends StandardSchemaV1
    ? StandardType<S, Reply>
    : S extends TypeBoxSchema
      ? TypeBoxStatic<S>
      : JsonSchemaOutput<S, Reply>;

// a schema declaring no `types` (a hand-written validator) types nothing: `unknown`, not `never`
type StandardType<S extends StandardSchemaV1, Reply extends boolean> = (
  Reply extends true
    ? StandardSchemaV1.InferInput<S>
    : StandardSchemaV1.InferOutput<S>
) extends infer T
  ? [T] extends [never]
    ? unknown
    : T
  : never;

// `S extends JSONSchema`, tested here rather than required of a type parameter: inferring against
// json-schema-to-ts's schema type is too deep for TypeScript (TS2589), testing a known type is not
type JsonSchemaOutput<S, Reply extends boolean> = string extends keyof S
  ? unknown
  : S extends JSONSchema
    ? FromSchema<S, { keepDefaultedPropertiesOptional: Reply }>
    : unknown;

/** A TypeBox 1.x schema as its type says it: a `~kind` (`'Object'`, `'Integer'`…), or `Type.Unsafe`'s `~unsafe`. */
type TypeBoxSchema = { readonly '~kind': string } | { readonly '~unsafe': unknown };

/**
 * The type TypeBox 1.x's `Static` gives schema `S`, read from the same marks, without `typebox`'s
 * types: `Type.Object` (`Type.Optional` and `Type.Readonly` properties), `Array`, `Tuple`, `Union`,
 * `Intersect`, `Record`, `Literal`, `Enum`, the scalars, `Any`, `Unknown`, `Never` and `Unsafe<T>`.
 * A `Type.Immutable` array or tuple is readonly; `TemplateLiteral` is a `string`; a plain JSON
 * Schema inside is typed by json-schema-to-ts; what is left (`Cyclic`, `Ref`, `This`, deferred
 * actions) is `unknown`. test/types/schema-libraries.test.ts compares it with TypeBox's own `Static`.
 */
type TypeBoxStatic<S> = S extends { readonly '~unsafe': infer T }
  ? T
  : S extends { readonly '~kind': infer Kind }
    ? TypeBoxKind<S, Kind>
    : JsonSchemaOutput<S, false>;

type TypeBoxKind<S, Kind> = Kind extends 'Object'
  ? S extends { readonly properties: infer P }
    ? keyof P extends never
      ? object
      : TypeBoxObject<P>
    : unknown
  : Kind extends 'Array'
    ? S extends { readonly items: infer I }
      ? S extends { readonly '~immutable': true }
        ? readonly TypeBoxStatic<I>[]
        : TypeBoxStatic<I>[]
      : unknown
    : Kind extends 'Tuple'
      ? S extends { readonly items: infer Items extends readonly unknown[] }
        ? S extends { readonly '~immutable': true }
          ? { readonly [I in keyof Items]: TypeBoxStatic<Items[I]> }
          : { -readonly [I in keyof Items]: TypeBoxStatic<Items[I]> }
        : unknown
      : Kind extends 'Union'
        ? S extends { readonly anyOf: infer Types extends readonly unknown[] }
          ? TypeBoxStatic<Types[number]>
          : unknown
        : Kind extends 'Intersect'
          ? S extends { readonly allOf: infer Types extends readonly unknown[] }
            ? TypeBoxIntersect<Types>
            : unknown
          : Kind extends 'Record'
            ? S extends { readonly patternProperties: infer P }
              ? { [K in TypeBoxRecordKey<keyof P>]: TypeBoxStatic<P[keyof P]> }
              : unknown
            : Kind extends 'Literal'
              ? S extends { readonly const: infer C }
                ? C
                : unknown
              : Kind extends 'Enum'
                ? S extends { readonly enum: infer Values extends readonly unknown[] }
                  ? Values[number]
                  : unknown
                : Kind extends keyof TypeBoxScalars
                  ? TypeBoxScalars[Kind]
                  : unknown;

interface TypeBoxScalars {
  // biome-ignore lint/suspicious/noExplicitAny: TypeBox's Static of `Type.Any()` is `any`
  Any: any;
  BigInt: bigint;
  Boolean: boolean;
  Integer: number;
  Never: never;
  Null: null;
  Number: number;
  String: string;
  Symbol: symbol;
  TemplateLiteral: string;
  Undefined: undefined;
  Unknown: unknown;
  // biome-ignore lint/suspicious/noConfusingVoidType: TypeBox's Static of `Type.Void()` is `void`
  Void: void;
}

type Optional<T> = T extends { readonly '~optional': true } ? true : false;
type ReadOnly<T> = T extends { readonly '~readonly': true } ? true : false;

type TypeBoxObject<P> = Simplify<
  { [K in keyof P as [Optional<P[K]>, ReadOnly<P[K]>] extends [false, false] ? K : never]: TypeBoxStatic<P[K]> } & {
    [K in keyof P as [Optional<P[K]>, ReadOnly<P[K]>] extends [true, false] ? K : never]?: TypeBoxStatic<P[K]>;
  } & { readonly [K in keyof P as [Optional<P[K]>, ReadOnly<P[K]>] extends [false, true] ? K : never]: TypeBoxStatic<P[K]> } & {
    readonly [K in keyof P as [Optional<P[K]>, ReadOnly<P[K]>] extends [true, true] ? K : never]?: TypeBoxStatic<P[K]>;
  }
>;

type TypeBoxIntersect<Types, Acc = unknown> = Types extends readonly [infer First, ...infer Rest]
  ? TypeBoxIntersect<Rest, Acc & TypeBoxStatic<First>>
  : Acc;

// TypeBox's patterns for `Type.Record(Type.Integer(), …)` and `Type.Record(Type.Number(), …)`: numeric keys
type TypeBoxRecordKey<Pattern> = Pattern extends '^-?(?:0|[1-9][0-9]*)$' | '^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$' ? number : string;

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
