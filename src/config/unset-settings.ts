import type { UnsetValue } from './interpolate.ts';

/**
 * Settings whose environment variables are not set, as `flotilla openapi` and
 * `flotilla config` read a file (`loadConfigFile(file, env, { unsetSettings: 'absent' })`):
 * such a key is absent from the config, and the service's settings schema is
 * not checked for it. A config read this way is never handed to a worker.
 */

/** A key path in the config, e.g. `['settings', 'databaseUrl']`. */
export type KeyPath = readonly (string | number)[];

const tolerated = new WeakMap<object, readonly KeyPath[]>();

/** Records that `config` was read without the values at `paths` (their variables are unset). */
export function markUnset(config: object, paths: readonly KeyPath[]): void {
  if (paths.length > 0) tolerated.set(config, paths);
}

/**
 * The paths `config` was read without; empty for a config read the usual way.
 *
 * @example
 * unsetPathsOf(loadConfigFile('app.yaml', process.env, { unsetSettings: 'absent' }).config); // [['settings', 'databaseUrl']]
 */
export function unsetPathsOf(config: object): readonly KeyPath[] {
  return tolerated.get(config) ?? [];
}

/** Whether `path` is one of `paths` or lies under one. */
export function isUnder(path: KeyPath, paths: readonly KeyPath[]): boolean {
  return paths.some((p) => p.length <= path.length && p.every((segment, i) => path[i] === segment));
}

/**
 * Removes the values of `found` from `value` (a document read as plain data): a map's key is
 * deleted, a sequence's item taken out (the last ones first, so the indices of the others hold).
 */
export function removeUnset(value: unknown, found: readonly UnsetValue[]): void {
  for (const { path } of [...found].reverse()) {
    let holder: unknown = value;
    for (const segment of path.slice(0, -1)) holder = (holder as Record<string | number, unknown> | undefined)?.[segment];
    const last = path.at(-1);
    if (Array.isArray(holder) && typeof last === 'number') holder.splice(last, 1);
    else if (typeof holder === 'object' && holder !== null && last !== undefined) delete (holder as Record<string | number, unknown>)[last];
  }
}

/**
 * A copy of `value` (the effective config as `flotilla config` prints it) with each left-out value
 * back in its place as `"[unset: NAME]"`, so the output shows where every unset variable is used.
 *
 * @example
 * withUnsetMarkers({ settings: {} }, [{ names: ['DATABASE_URL'], path: ['settings', 'databaseUrl'] }]);
 * // { settings: { databaseUrl: '[unset: DATABASE_URL]' } }
 */
export function withUnsetMarkers<T>(value: T, unset: readonly { names: readonly string[]; path: KeyPath }[]): T {
  const copy = structuredClone(value) as unknown;
  for (const { names, path } of unset) {
    let holder = copy as Record<string | number, unknown>;
    for (const segment of path.slice(0, -1)) {
      holder[segment] ??= typeof segment === 'number' ? [] : {};
      holder = holder[segment] as Record<string | number, unknown>;
    }
    const last = path.at(-1);
    const marker = `[unset: ${names.join(', ')}]`;
    if (Array.isArray(holder) && typeof last === 'number') holder.splice(last, 0, marker);
    else if (last !== undefined) holder[last] = marker;
  }
  return copy as T;
}
