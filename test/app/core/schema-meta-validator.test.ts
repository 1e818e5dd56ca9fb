import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { metaProblems } from '../../../src/app/core/validation.ts';
import { addFormats } from '../../../src/utils/ajv-formats.ts';
import { GENERATED, generatedSource, META_AJV_OPTIONS } from '../../../tools/validators.ts';

/**
 * What the check was before the validators were generated: ajv compiling the meta-schema at run time,
 * draft 2020-12 unless the schema's `$schema` names draft-07.
 */
const runtime2020 = new Ajv2020({ ...META_AJV_OPTIONS, code: { optimize: false } });
const runtime07 = new Ajv({ ...META_AJV_OPTIONS, code: { optimize: false } });
addFormats(runtime2020);
addFormats(runtime07);
const reference = (schema: Record<string, unknown>) => {
  const runtime = /draft-07/.test(String(schema['$schema'])) ? runtime07 : runtime2020;
  return runtime.validateSchema(schema) ? undefined : runtime.errorsText();
};

test('the generated meta-schema validators are what the installed ajv generates (node --conditions=source tools/validators.ts)', () => {
  assert.equal(readFileSync(GENERATED.meta.file, 'utf8'), generatedSource('meta'));
  assert.equal(readFileSync(GENERATED.meta2020.file, 'utf8'), generatedSource('meta2020'));
});

const CASES: Record<string, unknown>[] = [
  {},
  { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
  { type: 'strin' },
  { type: ['string', 'nul'] },
  { minLength: -1 },
  { minLength: 1.5 },
  { required: 'id' },
  { required: ['a', 'a'] },
  { properties: { a: { type: 'object', properties: { b: { enum: [] } } } } },
  { pattern: '(' },
  { pattern: '^[a-z]+$' },
  { $id: 'not a uri reference %%' },
  { $ref: '#/definitions/x', definitions: { x: { type: 7 } } },
  { items: [{ type: 'string' }, { type: 'bogus' }], additionalItems: false },
  { format: 42 },
  { $schema: 'http://json-schema.org/draft-07/schema#', type: 'nope' },
  { $schema: 'http://json-schema.org/draft-07/schema', type: 'string' },
  { $schema: 'http://json-schema.org/draft-07/schema#', items: [{ type: 'string' }], additionalItems: false },
  { $schema: 'https://json-schema.org/draft/2020-12/schema', prefixItems: [{ type: 'bogus' }] },
  { prefixItems: [{ type: 'string' }], items: false, unevaluatedProperties: false, dependentRequired: { a: ['b'] } },
  { $defs: { x: { type: 7 } }, $ref: '#/$defs/x' },
  { dependentRequired: { a: 'b' } },
  { allOf: [{ type: 'string' }, { maxLength: 'x' }], anyOf: [], oneOf: [true, false] },
  { dependencies: { a: ['b'], c: { type: 'x' } }, propertyNames: { pattern: '[' } },
  JSON.parse('{"if": {"type": "string"}, "then": {"minLength": 1}, "else": {"type": "q"}}'),
];

test('the generated validator judges schemas as ajv does at run time, with the same message', () => {
  for (const schema of CASES) assert.equal(metaProblems(schema), reference(schema), JSON.stringify(schema));
});

test('property: any JSON value as a schema gets the run-time answer', () => {
  const keyword = fc.constantFrom(
    'type',
    'minLength',
    'required',
    'properties',
    'items',
    'enum',
    'pattern',
    'anyOf',
    'not',
    'format',
    'minimum',
    'uniqueItems',
    '$ref',
    'title',
    'x-extra',
  );
  const schema = fc.dictionary(keyword, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
  fc.assert(
    fc.property(schema, (s) => {
      assert.equal(metaProblems(s), reference(s));
    }),
    { numRuns: 500 },
  );
});
