/**
 * Standard Schema v1 and Standard JSON Schema v1: the interfaces Zod, Valibot,
 * ArkType and others implement under `~standard`. Types only, written out here
 * as the specification invites (`@standard-schema/spec`), so that flotilla
 * depends on no schema library: a route's schema slot takes any value that has
 * `~standard` (see src/app/core/route-schemas.ts).
 */

/** A schema any Standard Schema library builds: validates an `Input` into an `Output`. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    readonly types?: Types<Input, Output> | undefined;
  }
  type Result<Output> = SuccessResult<Output> | FailureResult;
  interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  interface PathSegment {
    readonly key: PropertyKey;
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input'];
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
}

/** `target`: the JSON Schema dialect asked for; `libraryOptions`: passed to the library as they are. */
export interface StandardJsonSchemaOptions {
  readonly target: string;
  readonly libraryOptions?: Record<string, unknown>;
}

/** What a library that implements Standard JSON Schema adds to `~standard`: its schemas as JSON Schema. */
export interface StandardJsonSchemaProps {
  readonly jsonSchema: {
    /** The JSON Schema of what the schema accepts. */
    readonly input: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
    /** The JSON Schema of what it produces (after transforms); may throw when JSON Schema cannot say it. */
    readonly output: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
  };
}

/**
 * Whether `value` is a Standard Schema: an object or a function (ArkType's types are functions)
 * with a `~standard` object whose `validate` is a function.
 *
 * @example
 * isStandardSchema(z.string()); // true
 * isStandardSchema({ type: 'string' }); // false
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return typeof props === 'object' && props !== null && typeof (props as { validate?: unknown }).validate === 'function';
}
