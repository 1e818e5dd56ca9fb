/** No schema: what `defineRoute` assumes when a route declares none. */
export type NoSchemas = Record<never, never>;

/**
 * The parameters of a find-my-way path, all strings, as hono types them:
 * `/books/:id` → `{ id: string }`, `/files/*` → `{ '*': string }`, a trailing
 * `:id?` is optional, `::` is a literal colon, a regex (`:id(^\\d+$)`) is skipped.
 *
 * @example
 * type P = PathParams<'/shelves/:shelf/books/:id'>; // { shelf: string; id: string }
 */
export type PathParams<Path extends string> = string extends Path ? Record<string, string> : ParamsObject<Scan<Path>, NoSchemas>;

/** Reads a path one character at a time, collecting the required and the optional parameter names. */
export type Scan<P extends string, Req extends string = never, Opt extends string = never> = P extends `::${infer R}`
  ? Scan<R, Req, Opt>
  : P extends `:${infer R}`
    ? AfterName<TakeName<R>, Req, Opt>
    : P extends `*${infer R}`
      ? Scan<R, Req | '*', Opt>
      : P extends `${infer _C}${infer R}`
        ? Scan<R, Req, Opt>
        : { req: Req; opt: Opt };

/** A parameter's name ends where find-my-way ends it (`(`, `-`, `.`, `/`), or at the `?` of an optional one. */
type TakeName<S extends string, Acc extends string = ''> = S extends `${infer C}${infer R}`
  ? C extends '(' | '-' | '.' | '/' | '?'
    ? [Acc, S]
    : TakeName<R, `${Acc}${C}`>
  : [Acc, ''];

type AfterName<T, Req extends string, Opt extends string> = T extends [infer N extends string, infer R extends string]
  ? R extends `?${infer After}`
    ? Scan<After, Req, Opt | N>
    : R extends `(${infer After}`
      ? Scan<SkipGroup<After>, Req | N, Opt>
      : Scan<R, Req | N, Opt>
  : never;

/** What follows the `)` closing a parameter's regex (nested groups and `\` escapes skipped). */
type SkipGroup<S extends string, Depth extends unknown[] = []> = S extends `${infer C}${infer R}`
  ? C extends '\\'
    ? R extends `${infer _Escaped}${infer After}`
      ? SkipGroup<After, Depth>
      : ''
    : C extends '('
      ? SkipGroup<R, [...Depth, C]>
      : C extends ')'
        ? Depth extends [unknown, ...infer Outer]
          ? SkipGroup<R, Outer>
          : R
        : SkipGroup<R, Depth>
  : '';

/** The params object: one key per path parameter, typed by the params schema where it declares the key, else a string. */
export type ParamsObject<Names, Declared> = Names extends { req: infer Req extends string; opt: infer Opt extends string }
  ? Simplify<
      { [K in Req]: K extends keyof Declared ? Exclude<Declared[K], undefined> : string } & {
        [K in Opt]?: K extends keyof Declared ? Exclude<Declared[K], undefined> : string;
      }
    >
  : never;

export type Simplify<T> = { [K in keyof T]: T[K] } & {};
