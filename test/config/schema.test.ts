import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { CONFIG_SCHEMA } from '../../src/config/schema.ts';
import { adoptResolvedConfig, resolveConfig } from '../../src/config/validate.ts';

// The config's validator skips the meta-schema check at start-up (it is compiled in every process): this is that check.
test('the config schema is a valid JSON Schema', () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, validateFormats: false });
  assert.equal(ajv.validateSchema(CONFIG_SCHEMA), true, ajv.errorsText(ajv.errors));
});

test('a resolved config resolves to itself, and an adopted one is frozen and not validated again', () => {
  const config = resolveConfig({ port: 0, docs: { title: 'Books' } });
  assert.equal(resolveConfig(config), config);

  // what a worker receives from the primary: the resolved config as JSON
  const copy = adoptResolvedConfig(JSON.parse(JSON.stringify(config)));
  assert.ok(Object.isFrozen(copy) && Object.isFrozen(copy.docs));
  assert.equal(resolveConfig(copy), copy);
  assert.deepEqual(copy, config);

  // a changed copy is a new input, validated as any other
  assert.throws(() => resolveConfig({ ...config, port: -1 }), /port/);
});
