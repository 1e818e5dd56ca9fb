import { isRecord } from '../utils/is-record.ts';

/**
 * The checks a message's fields are declared with (src/ipc/protocol.ts): each returns why a value
 * is wrong, in words for a log line (never the value itself), or undefined when it is right, and
 * carries the type it accepts, so that a message's type derives from the checks of its fields.
 */

declare const accepts: unique symbol;

/**
 * A check of one field that accepts values of type `T`: `undefined` when the value is right, else
 * why not (`must be a boolean`; a nested field's problem starts with `.` or `[`).
 *
 * @example
 * const port: Field<number> = (x) => (Number.isInteger(x) ? undefined : 'must be an integer');
 */
export type Field<T> = ((value: unknown) => string | undefined) & { readonly [accepts]?: T };

/** The checks of a record's fields, by name. */
export type Fields = Record<string, Field<unknown>>;

/**
 * The type of a record whose fields `F` check: each field's type is what its check accepts (a field's
 * documentation comes along).
 *
 * @example
 * type Address = Shape<{ host: Field<string>; port: Field<number> }>; // { host: string; port: number }
 */
export type Shape<F extends Fields> = { -readonly [K in keyof F]: F[K] extends { readonly [accepts]?: infer T } ? T : never };

/**
 * A string of `min` to `max` characters.
 *
 * @example
 * string(1, 255)('') // 'must be a string of 1 to 255 characters'
 */
export const string =
  (min: number, max: number): Field<string> =>
  (x) =>
    typeof x === 'string' && x.length >= min && x.length <= max ? undefined : `must be a string of ${min} to ${max} characters`;

/** `true` or `false`. */
export const boolean: Field<boolean> = (x) => (typeof x === 'boolean' ? undefined : 'must be a boolean');

/** A finite number, zero or more. */
export const amount: Field<number> = (x) =>
  typeof x === 'number' && Number.isFinite(x) && x >= 0 ? undefined : 'must be a finite number >= 0';

/**
 * One of `values`.
 *
 * @example
 * oneOf('get', 'set', 'delete')('list') // "must be 'get', 'set' or 'delete'"
 */
export function oneOf<const T extends string>(...values: T[]): Field<T> {
  const named = values.map((v) => `'${v}'`);
  const problem = `must be ${named.slice(0, -1).join(', ')} or ${named.at(-1)}`;
  return (x) => (values.includes(x as T) ? undefined : problem);
}

/**
 * A record of exactly `fields`, as a field of a message.
 *
 * @example
 * record({ host: string(1, 255) })({ host: '' }) // '.host must be a string of 1 to 255 characters'
 */
export function record<F extends Fields>(fields: F): Field<Shape<F>> {
  return (x) => {
    if (!isRecord(x)) return 'must be an object';
    const problem = shapeProblem(x, fields);
    return problem === undefined ? undefined : `.${problem}`;
  };
}

/**
 * A non-empty array of at most `max` records, each of exactly `fields`.
 *
 * @example
 * batchOf(1024, { id: amount })([{ id: -1 }]) // '[0].id must be a finite number >= 0'
 */
export function batchOf<F extends Fields>(max: number, fields: F): Field<Shape<F>[]> {
  return (x) => {
    if (!Array.isArray(x) || x.length === 0 || x.length > max) return `must be an array of 1 to ${max} entries`;
    for (let i = 0; i < x.length; i++) {
      const entry: unknown = x[i];
      const problem = isRecord(entry) ? shapeProblem(entry, fields) : 'must be an object';
      if (problem !== undefined) return `[${i}]${isRecord(entry) ? '.' : ' '}${problem}`;
    }
    return undefined;
  };
}

/**
 * The first field of `x` that is missing, unexpected or wrong, e.g. `address.port must be a port (1-65535)`;
 * undefined when `x` has exactly `fields`, each right.
 */
export function shapeProblem(x: Record<string, unknown>, fields: Fields): string | undefined {
  for (const key of Object.keys(x)) if (!Object.hasOwn(fields, key)) return `unexpected field ${quote(key)}`;
  for (const [key, check] of Object.entries(fields)) {
    const problem = Object.hasOwn(x, key) ? check(x[key]) : 'is missing';
    if (problem !== undefined) return /^[.[]/.test(problem) ? `${key}${problem}` : `${key} ${problem}`;
  }
  return undefined;
}

/** A name as a log line may show it: quoted, and cut at 40 characters. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}
