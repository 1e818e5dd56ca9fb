import { createRequire } from 'node:module';
import type { Ajv } from 'ajv';
import { addFormats } from '../utils/ajv-formats.ts';
import { isRecord } from '../utils/is-record.ts';
import { ConfigError } from './config-error.ts';
import { settingsSecretProblems } from './fallback-secrets.ts';
import type { FallbackValue } from './interpolate.ts';
import { REDACTED } from './redact.ts';
import { isUnder, type KeyPath } from './unset-settings.ts';
import { deepFreeze, schemaProblems } from './validate.ts';

/**
 * The service's own settings: the top-level `settings` key of the config,
 * validated by the JSON Schema the service declares with
 * `defineService({ settings, setup })` (src/app/define-service.ts). A key
 * whose schema says `writeOnly: true` or `secret: true` is a secret:
 * `flotilla config` prints it redacted.
 */

/** Settings as the setup reads them: validated, defaults applied, frozen. */
export type Settings = Readonly<Record<string, unknown>>;

const EMPTY: Settings = Object.freeze({});

let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ReturnType<Ajv['compile']>>();

/** Same options as request validation (src/app/core/validation.ts), plus the `secret` annotation. */
function compile(schema: object) {
  let check = compiled.get(schema);
  if (check === undefined) {
    if (ajv === undefined) {
      // required on first use: the primary's main thread loads this module but checks no settings (its
      // service thread and the workers do), and loading ajv was ~15 ms of its start-up before any fork
      const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
      ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, useDefaults: true, keywords: ['secret'] });
      addFormats(ajv);
    }
    check = ajv.compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Validates `input` (the config's `settings`, absent counting as `{}`) against
 * the service's schema; returns a frozen copy with the schema's defaults
 * applied. Throws a `ConfigError` listing every problem under `settings.…`,
 * except those about the `unset` paths (keys read without their unset
 * environment variables, see unset-settings.ts), and every secret (`secret: true`,
 * `writeOnly: true`) among the `fallbacks`: values that took a development default a
 * production config refuses (see fallback-secrets.ts).
 *
 * @example
 * checkSettings({ type: 'object', properties: { pool: { type: 'integer', default: 10 } } }, undefined); // { pool: 10 }
 * checkSettings(schema, app.config.settings, unsetPathsOf(app.config), settingsFallbacksOf(app.config));
 */
export function checkSettings(
  schema: object,
  input: unknown,
  unset: readonly KeyPath[] = [],
  fallbacks: readonly FallbackValue[] = [],
): Settings {
  const value = structuredClone(input ?? {});
  const problems = schemaProblems(compile(schema), value, ['settings'], (path) => isUnder(path, unset));
  if (fallbacks.length > 0) problems.push(...settingsSecretProblems(secretPaths(schema, value), fallbacks));
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(value) as Settings;
}

/** The problem of a config with `settings` whose service declares no schema for them. */
export function undeclaredSettings(): ConfigError {
  return new ConfigError([
    {
      key: 'settings',
      path: ['settings'],
      message: 'the service declares no settings schema: declare one with defineService({ settings: schema, setup })',
    },
  ]);
}

const adopted = new WeakMap<object, Settings>();

/** Records the validated settings of a registrar (the App or the primary's service part) for `settingsOf`. */
export function adoptSettings(owner: object, settings: Settings): void {
  adopted.set(owner, settings);
}

/** A registrar's settings: the validated ones once the service's setup adopted them, else the config's as given. */
export function settingsOf(owner: object, config: { readonly settings?: unknown }): Settings {
  return adopted.get(owner) ?? (isRecord(config.settings) ? (config.settings as Settings) : EMPTY);
}

/**
 * A copy of `value` with every value whose schema is marked `writeOnly: true`
 * or `secret: true` replaced by `"[redacted]"`, following `properties`,
 * `additionalProperties`, `patternProperties`, `items`, the branches of
 * `allOf`/`anyOf`/`oneOf`/`then`/`else`, and local `$ref`s.
 *
 * @example
 * redactSettings({ properties: { password: { type: 'string', writeOnly: true } } }, { password: 'x' }); // { password: '[redacted]' }
 */
export function redactSettings(schema: unknown, value: unknown, root: unknown = schema, depth = 0): unknown {
  // a local `$ref` (`#/$defs/…`) is followed, so a secret declared once in `$defs` is still a secret
  const node = resolveRef(schema, root);
  if (!isRecord(node) || depth > MAX_REF_DEPTH) return value;
  const next = (sub: unknown, inner: unknown) => redactSettings(sub, inner, root, depth + 1);
  if (node['writeOnly'] === true || node['secret'] === true) return value === undefined ? value : REDACTED;
  let out = value;
  for (const branch of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = node[branch];
    if (Array.isArray(list)) for (const sub of list) out = next(sub, out);
  }
  for (const branch of ['then', 'else'] as const) if (node[branch] !== undefined) out = next(node[branch], out);
  if (Array.isArray(out)) return out.map((item) => next(node['items'], item));
  if (!isRecord(out)) return out;
  const properties = isRecord(node['properties']) ? node['properties'] : {};
  const patterns = isRecord(node['patternProperties']) ? Object.entries(node['patternProperties']) : [];
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(out)) {
    const pattern = patterns.find(([source]) => new RegExp(source, 'u').test(key));
    const sub = Object.hasOwn(properties, key) ? properties[key] : pattern !== undefined ? pattern[1] : node['additionalProperties'];
    copy[key] = next(sub, inner);
  }
  return copy;
}

/**
 * The paths (from `settings`) of the values of `value` whose schema marks them secret: those
 * `redactSettings` redacts.
 *
 * @example
 * secretPaths({ properties: { apiKey: { type: 'string', secret: true } } }, { apiKey: 'x' }); // [['settings', 'apiKey']]
 */
export function secretPaths(schema: object, value: unknown): KeyPath[] {
  const paths: KeyPath[] = [];
  const walk = (redacted: unknown, original: unknown, path: (string | number)[]) => {
    if (redacted === REDACTED && original !== REDACTED) paths.push(path);
    else if (Array.isArray(redacted) && Array.isArray(original)) {
      for (const [i, r] of redacted.entries()) walk(r, original[i], [...path, i]);
    } else if (isRecord(redacted) && isRecord(original))
      for (const key of Object.keys(redacted)) walk(redacted[key], original[key], [...path, key]);
  };
  walk(redactSettings(schema, value), value, ['settings']);
  return paths;
}

/** How deep `redactSettings` follows a schema (a `$ref` cycle stops there). */
const MAX_REF_DEPTH = 64;

/** The schema a local `$ref` (`#/…`, a JSON pointer into `root`) names; the schema itself otherwise. */
function resolveRef(schema: unknown, root: unknown): unknown {
  const ref = isRecord(schema) ? schema['$ref'] : undefined;
  if (typeof ref !== 'string' || !ref.startsWith('#')) return schema;
  let node = root;
  for (const part of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isRecord(node) ? node[key] : undefined;
  }
  return node;
}
