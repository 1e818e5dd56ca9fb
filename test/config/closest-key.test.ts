import { type TestContext, test } from 'node:test';
import { closestKey, editDistance } from '../../src/config/closest-key.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { checkSettings } from '../../src/config/settings.ts';
import { configProblems } from '../../src/config/validate.ts';

/** The config's problems as `key: message` lines. */
function problems(input: unknown): string[] {
  return configProblems(input, { cpus: 2 }).map((p) => `${p.key}: ${p.message}`);
}

/** The problems `checkSettings` throws, as `key: message` lines. */
function settingsProblems(t: TestContext, schema: object, input: unknown): string[] {
  try {
    checkSettings(schema, input);
  } catch (error) {
    t.assert.ok(error instanceof ConfigError);
    return error.problems.map((p) => `${p.key}: ${p.message}`);
  }
  t.assert.fail('expected a ConfigError');
}

test('the edit distance counts a swap of two neighbouring letters as one edit', (t: TestContext) => {
  t.assert.strictEqual(editDistance('wokers', 'workers'), 1);
  t.assert.strictEqual(editDistance('prot', 'port'), 1);
  t.assert.strictEqual(editDistance('balancng', 'balancing'), 1);
  t.assert.strictEqual(editDistance('kitten', 'sitting'), 3);
  t.assert.strictEqual(editDistance('', 'abc'), 3);
  t.assert.strictEqual(editDistance('same', 'same'), 0);
});

test('a key is suggested only when close: at most a third of the length, never more than 2 edits', (t: TestContext) => {
  const known = ['port', 'workers', 'cluster', 'cors', 'serviceName'];
  t.assert.strictEqual(closestKey('wokers', known), 'workers');
  t.assert.strictEqual(closestKey('wrkrs', known), undefined, '2 edits in 5 letters is too far');
  t.assert.strictEqual(closestKey('clustr', known), 'cluster');
  t.assert.strictEqual(closestKey('servicename', known), 'serviceName', 'letter case is no edit');
  t.assert.strictEqual(closestKey('colour', known), undefined);
  t.assert.strictEqual(closestKey('x', known), undefined);
  t.assert.strictEqual(closestKey('', known), undefined);
  t.assert.strictEqual(closestKey('a'.repeat(10_000), known), undefined, 'a key longer than any is compared with none');
});

test('on a tie the first known key wins, and a closer one beats an earlier one', (t: TestContext) => {
  t.assert.strictEqual(closestKey('hose', ['host', 'hoses']), 'host');
  t.assert.strictEqual(closestKey('hostt', ['hosts2', 'host']), 'host');
});

test('an unknown key of the config names the closest key allowed at its place, at any depth', (t: TestContext) => {
  t.assert.deepStrictEqual(problems({ wokers: 2 }), ['wokers: unknown key; did you mean workers?']);
  t.assert.deepStrictEqual(problems({ cluster: { balancng: 'kernel' } }), ['cluster.balancng: unknown key; did you mean balancing?']);
  t.assert.deepStrictEqual(problems({ cors: { orgins: ['https://a.example'] } }), ['cors.orgins: unknown key; did you mean origins?']);
  // `port` is a top-level key, not one of `logging`'s: nothing is suggested from another place
  t.assert.deepStrictEqual(problems({ logging: { prot: 1 } }), ['logging.prot: unknown key']);
  t.assert.deepStrictEqual(problems({ colour: 'red' }), ['colour: unknown key']);
});

test("an unknown settings key names the closest key of the service's schema, through $ref and oneOf", (t: TestContext) => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      greeting: { type: 'string' },
      database: { $ref: '#/$defs/database' },
      cache: { oneOf: [{ type: 'object', additionalProperties: false, properties: { ttlMs: { type: 'integer' } } }, { type: 'boolean' }] },
    },
    $defs: {
      database: { type: 'object', additionalProperties: false, properties: { host: { type: 'string' }, pool: { type: 'integer' } } },
    },
  };
  t.assert.deepStrictEqual(settingsProblems(t, schema, { greting: 'hi' }), ['settings.greting: unknown key; did you mean greeting?']);
  t.assert.deepStrictEqual(settingsProblems(t, schema, { database: { hots: 'db' } }), [
    'settings.database.hots: unknown key; did you mean host?',
  ]);
  t.assert.ok(settingsProblems(t, schema, { cache: { tllMs: 1 } }).includes('settings.cache: does not match any allowed form'));
  t.assert.deepStrictEqual(settingsProblems(t, schema, { colour: 'blue' }), ['settings.colour: unknown key']);
});
