import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FromSchema } from 'json-schema-to-ts';
import { DEFAULTS, defaultsOf } from '../../src/config/defaults.ts';
import { CONFIG_SCHEMA } from '../../src/config/schema.ts';
import type { KConfig, ResolvedConfig } from '../../src/config/types.ts';
import { configProblems, resolveConfig } from '../../src/config/validate.ts';
import { GENERATED, generatedSource } from '../../tools/validators.ts';

// CONFIG_SCHEMA is the one declaration of the config: these tests keep it complete (a description on
// every key, a default wherever the resolved config has the key) and check that what derives from
// it (DEFAULTS, the types) agrees with it. The configuration reference's table is checked in test/docs/config-reference.test.ts.

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface Node {
  readonly [keyword: string]: unknown;
  description?: unknown;
  default?: unknown;
  properties?: Record<string, Node>;
  items?: Node;
}

/** The keys without a default: absent from a resolved config until given. Anything else has one. */
const OPTIONAL = [
  'tls',
  'tls.caFile',
  'tls.minVersion',
  'tls.ciphers',
  'tls.requestClientCert',
  'docs.description',
  'docs.contact',
  'docs.license',
  'docs.security',
  'i18n',
  'rateLimit',
  'rateLimit.onStoreError',
  'rateLimit.ipv6Subnet',
  'rateLimit.hook',
  'service',
  'settings',
  'coordination.url',
] as const;

/** Every key of the schema with its schema and whether the object holding it has a default (or is the root). */
function keys(node: Node = CONFIG_SCHEMA, prefix = '', holderDefaulted = true): { key: string; node: Node; defaulted: boolean }[] {
  const out: { key: string; node: Node; defaulted: boolean }[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    out.push({ key, node: child, defaulted: holderDefaulted });
    out.push(...keys(child, key, holderDefaulted && 'default' in child));
    // the properties of array entries: no defaults there (ajv would not apply them, nor would resolveConfig)
    if (child.items !== undefined) out.push(...keys(child.items, `${key}[]`, false));
  }
  return out;
}

test('every key of the schema has a description', () => {
  const all = keys();
  assert.ok(all.length > 60, `${all.length} keys`);
  assert.deepEqual(
    all.filter(({ node }) => typeof node.description !== 'string' || node.description.trim().length < 10).map((k) => k.key),
    [],
  );
});

test('every key that a resolved config always has declares a default; only the listed keys have none', () => {
  const all = keys();
  const expected = all.filter((k) => k.defaulted && !(OPTIONAL as readonly string[]).includes(k.key));
  assert.deepEqual(
    expected.filter((k) => !('default' in k.node)).map((k) => k.key),
    [],
    'keys lacking a default',
  );
  // a default inside an object without one would never be applied (nor typed as present)
  assert.deepEqual(
    all.filter((k) => !k.defaulted && 'default' in k.node).map((k) => k.key),
    [],
    'defaults that cannot apply',
  );
  // (a key inside an optional object, `rateLimit.onStoreError`, is optional without being listed here)
  const present = new Set(all.filter((k) => k.defaulted).map((k) => k.key));
  assert.deepEqual(
    all.filter((k) => k.defaulted && !('default' in k.node)).map((k) => k.key),
    OPTIONAL.filter((k) => present.has(k)),
    'the keys without a default',
  );
});

test('every default is valid for its own key, and DEFAULTS are a valid config', () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, discriminator: true });
  addFormats(ajv, ['uri', 'email']);
  for (const { key, node } of keys()) {
    if (!('default' in node)) continue;
    const { default: value, ...schema } = node;
    const check = ajv.compile(schema);
    assert.ok(check(value), `${key}: default ${JSON.stringify(value)}: ${ajv.errorsText(check.errors)}`);
  }
  assert.ok(ajv.validate(CONFIG_SCHEMA, DEFAULTS), ajv.errorsText(ajv.errors));
  // the cross-field rules too: the defaults together are a config that resolves to itself
  assert.deepEqual(configProblems(DEFAULTS, { cpus: 1 }), []);
  assert.deepEqual(resolveConfig(structuredClone(DEFAULTS)), DEFAULTS);
  assert.deepEqual(resolveConfig({}), DEFAULTS);
});

test("DEFAULTS are the schema's defaults as ajv's useDefaults applies them, read without compiling a validator", () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, discriminator: true, useDefaults: true });
  addFormats(ajv, ['uri', 'email']);
  const filled = {};
  assert.ok(ajv.validate(CONFIG_SCHEMA, filled), ajv.errorsText(ajv.errors));
  assert.deepEqual(DEFAULTS, filled);
  assert.ok(Object.isFrozen(DEFAULTS) && Object.isFrozen(DEFAULTS.cors) && Object.isFrozen(DEFAULTS.cors.methods));
  // each key's default, as the configuration reference's table shows them
  assert.equal(defaultsOf(CONFIG_SCHEMA.properties.cluster.properties.maxRequests), 0);
  assert.equal(defaultsOf(CONFIG_SCHEMA.properties.service), undefined);
  assert.deepEqual(defaultsOf(CONFIG_SCHEMA.properties.limits), {
    bodyBytes: 1_048_576,
    paramLength: 100,
    headerBytes: 16_384,
    concurrentStreams: 100,
  });
});

// Type-level: checked by `npm run typecheck` (the values below only make the file run).
type Schema = typeof CONFIG_SCHEMA;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
type ObjectKeys<T> = {
  [K in keyof T]-?: Exclude<T[K], undefined> extends readonly unknown[] ? never : Exclude<T[K], undefined> extends object ? K : never;
}[keyof T];
/** The optional keys of a resolved config, down to the second level, as `a` or `a.b`. */
type OptionalPaths<T> =
  | OptionalKeys<T>
  | { [K in ObjectKeys<T> & string]: `${K}.${OptionalKeys<Exclude<T[K], undefined>> & string}` }[ObjectKeys<T> & string];

test('the types agree with the schema', () => {
  const agree: [
    // ResolvedConfig is FromSchema's reading (defaulted keys present), readonly
    Mutual<ResolvedConfig, FromSchema<Schema>>,
    // KConfig is FromSchema's reading with every key optional
    Mutual<KConfig, FromSchema<Schema, { keepDefaultedPropertiesOptional: true }>>,
    // the keys a resolved config may lack are exactly those without a default
    Equal<OptionalPaths<ResolvedConfig>, (typeof OPTIONAL)[number]>,
    // everything is optional in KConfig, and a resolved config is a KConfig (it can be resolved again)
    Mutual<OptionalKeys<KConfig>, keyof KConfig>,
    Mutual<OptionalKeys<NonNullable<KConfig['cluster']>>, keyof NonNullable<KConfig['cluster']>>,
    [ResolvedConfig] extends [KConfig] ? true : false,
    Equal<ResolvedConfig['workers'], number | 'auto' | Readonly<{ min: number; max: number | 'auto' }>>,
    Equal<ResolvedConfig['cluster']['balancing'], 'primary' | 'kernel'>,
    Equal<ResolvedConfig['docs']['servers'], string[]>,
  ] = [true, true, true, true, true, true, true, true, true];
  assert.equal(agree.length, 9);

  // a sample: the resolved defaults are both a ResolvedConfig and FromSchema's type, and an input
  const sample: ResolvedConfig = resolveConfig({ workers: 2, i18n: { directory: 'i18n', defaultLocale: 'en' } });
  const asSchema: FromSchema<Schema> = sample;
  const back: ResolvedConfig = asSchema;
  const input: KConfig = back;
  assert.equal(input.workers, 2);

  // @ts-expect-error exactOptionalPropertyTypes: an absent key is left out, not `undefined`
  const explicitUndefined: KConfig = { port: undefined };
  // @ts-expect-error values outside the schema's enum
  const badEnv: KConfig = { env: 'test' };
  // @ts-expect-error unknown keys
  const unknownKey: KConfig = { prot: 3000 };
  // @ts-expect-error i18n needs both of its keys
  const halfI18n: KConfig = { i18n: { directory: 'i18n' } };
  assert.ok([badEnv, unknownKey, halfI18n].every((c) => configProblems(c).length > 0));
  assert.ok(explicitUndefined);
  const mutate = (c: ResolvedConfig) => {
    // @ts-expect-error a resolved config is readonly, down to its second level
    c.cluster.maxRequests = 1;
  };
  assert.throws(() => mutate(sample), TypeError);
});

test('the generated config validator is what the installed ajv generates from CONFIG_SCHEMA (node --conditions=source tools/validators.ts)', () => {
  assert.equal(readFileSync(GENERATED.config.file, 'utf8'), generatedSource('config'));
});
