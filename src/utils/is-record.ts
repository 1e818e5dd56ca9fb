/**
 * A plain object: not null, not an array, its prototype `Object.prototype` or
 * null (what JSON, YAML and IPC deliver; never a class instance).
 *
 * @example
 * if (isRecord(value)) for (const key of Object.keys(value)) …
 */
export function isRecord(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto: unknown = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}
