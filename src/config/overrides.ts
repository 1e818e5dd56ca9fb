import { isRecord } from '../utils/is-record.ts';
import type { KConfig } from './types.ts';

/**
 * A part of a config, any key at any depth optional: what `loadConfig`'s `overrides` takes.
 *
 * @example
 * const overrides: ConfigOverrides = { port: 0, logging: { level: 'warn' }, settings: { databaseUrl: 'postgres://test' } };
 */
export type ConfigOverrides = PartialDeep<KConfig>;

/** Every key optional at any depth, `undefined` allowed (a key left `undefined` changes nothing); lists whole. */
type PartialDeep<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: PartialDeep<T[K]> | undefined } : T;

/**
 * `value` with `overrides` merged over it: plain objects key by key, anything else replacing; an
 * `undefined` override changes nothing. Neither argument is changed.
 */
export function withOverrides(value: unknown, overrides: unknown): unknown {
  if (overrides === undefined) return value;
  if (!isRecord(value) || !isRecord(overrides)) return overrides;
  const merged: Record<string, unknown> = { ...value };
  for (const [key, over] of Object.entries(overrides)) {
    // defined, not assigned: a `__proto__` key stays a key (the validation names it), never a prototype
    const base = Object.hasOwn(value, key) ? value[key] : undefined;
    Object.defineProperty(merged, key, { value: withOverrides(base, over), enumerable: true, writable: true, configurable: true });
  }
  return merged;
}

/** Whether the overrides give a value at `path` or above it: a problem there is theirs. */
export function givenBy(overrides: unknown, path: readonly (string | number)[]): boolean {
  let node = overrides;
  for (const segment of path) {
    if (!isRecord(node)) return true; // a list or a scalar replaced the file's value, with all below it
    if (!Object.hasOwn(node, segment) || node[segment] === undefined) return false;
    node = node[segment];
  }
  return true;
}

/** Whether the overrides replace the file's value at `path` (a value that is not an object merged into it, at or above it). */
export function replacedBy(overrides: unknown, path: readonly (string | number)[]): boolean {
  let node = overrides;
  for (const segment of path) {
    if (!isRecord(node)) return true;
    if (!Object.hasOwn(node, segment) || node[segment] === undefined) return false;
    node = node[segment];
  }
  return node !== undefined && !isRecord(node);
}
