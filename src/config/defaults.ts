import { CONFIG_SCHEMA } from './schema.ts';
import type { ResolvedConfig } from './types.ts';

/**
 * The defaults that `schema` declares: its `default`, and for an object the defaults of its
 * properties filled in where that default has none (ajv's `useDefaults` semantics, so `default: {}`
 * stands for "present, with the children's defaults"). A key without `default` stays absent.
 */
export function defaultsOf(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const { default: value, properties } = schema as { default?: unknown; properties?: Record<string, unknown> };
  if (typeof properties !== 'object' || typeof value !== 'object' || value === null || Array.isArray(value)) {
    return structuredClone(value);
  }
  const out: Record<string, unknown> = structuredClone(value) as Record<string, unknown>;
  for (const [key, child] of Object.entries(properties)) {
    if (key in out || typeof child !== 'object' || child === null || !('default' in child)) continue;
    out[key] = defaultsOf(child);
  }
  return out;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const inner of Object.values(v)) deepFreeze(inner);
    Object.freeze(v);
  }
  return v;
}

/**
 * Every default of the configuration, read once from the `default`s of `CONFIG_SCHEMA` (no
 * validator is compiled for it: workers never compile one); deeply frozen. Keys without a default
 * (`service`, `i18n`, `docs.description`/`contact`/`license`) are absent.
 */
export const DEFAULTS: ResolvedConfig = deepFreeze(defaultsOf({ ...CONFIG_SCHEMA, default: {} }) as ResolvedConfig);
