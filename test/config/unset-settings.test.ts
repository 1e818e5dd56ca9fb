// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.ts';
import { loadConfigFile } from '../../src/config/load-file.ts';
import { checkSettings } from '../../src/config/settings.ts';
import { isUnder, removeUnset, unsetPathsOf, withUnsetMarkers } from '../../src/config/unset-settings.ts';
import { tempFiles } from '../helpers/cluster.ts';

const YAML = [
  'port: 0',
  'settings:',
  '  databaseUrl: ${DATABASE_URL}',
  '  replicas: ["${REPLICA_A}", "db-b:${PORT:-5432}", "${REPLICA_C}"]',
  '  pool: ${POOL:-5}',
  '  label: "${TEAM}-${REGION}"',
  '',
].join('\n');

test('isUnder: the path itself or anything below it', (t: TestContext) => {
  t.assert.ok(isUnder(['settings', 'a'], [['settings', 'a']]));
  t.assert.ok(isUnder(['settings', 'a', 'b'], [['settings', 'a']]));
  t.assert.ok(!isUnder(['settings'], [['settings', 'a']]));
  t.assert.ok(!isUnder(['settings', 'ab'], [['settings', 'a']]));
});

test('removeUnset takes out map keys and sequence items; withUnsetMarkers puts markers back in their places', (t: TestContext) => {
  const value = { settings: { a: 'x', list: ['1', '2', '3'] } };
  const found = [
    { names: ['A'], path: ['settings', 'a'], offset: 0 },
    { names: ['L0'], path: ['settings', 'list', 0], offset: 0 },
    { names: ['L2'], path: ['settings', 'list', 2], offset: 0 },
  ];
  removeUnset(value, found);
  t.assert.deepStrictEqual(value, { settings: { list: ['2'] } });
  t.assert.deepStrictEqual(withUnsetMarkers(value, found), { settings: { a: '[unset: A]', list: ['[unset: L0]', '2', '[unset: L2]'] } });
});

test("loadConfigFile with unsetSettings: 'absent' leaves out what names unset variables, located; strict by default", (t: TestContext) => {
  const file = join(tempFiles(t, { 'app.yaml': YAML }), 'app.yaml');
  t.assert.throws(() => loadConfigFile(file, {}), ConfigError);
  const loaded = loadConfigFile(file, { REPLICA_C: 'db-c' }, { unsetSettings: 'absent' });
  t.assert.deepStrictEqual(loaded.config.settings, { replicas: ['db-b:5432', 'db-c'], pool: 5 });
  t.assert.deepStrictEqual(
    loaded.unset?.map((u) => [u.key, u.line, u.names]),
    [
      ['settings.databaseUrl', 3, ['DATABASE_URL']],
      ['settings.replicas[0]', 4, ['REPLICA_A']],
      ['settings.label', 6, ['TEAM', 'REGION']],
    ],
  );
  t.assert.deepStrictEqual(unsetPathsOf(loaded.config), [
    ['settings', 'databaseUrl'],
    ['settings', 'replicas', 0],
    ['settings', 'label'],
  ]);
});

test("unset variables outside settings stay problems, even with unsetSettings: 'absent'", (t: TestContext) => {
  const file = join(tempFiles(t, { 'app.yaml': 'serviceName: ${NAME}\n' }), 'app.yaml');
  t.assert.throws(
    () => loadConfigFile(file, {}, { unsetSettings: 'absent' }),
    /app\.yaml:1: serviceName: environment variable NAME is not set/,
  );
});

test('checkSettings skips the problems of unset keys (required included), and only those', (t: TestContext) => {
  const schema = {
    type: 'object',
    required: ['dsn', 'pool'],
    properties: { dsn: { type: 'string' }, pool: { type: 'integer', minimum: 1 } },
  };
  t.assert.deepStrictEqual(checkSettings(schema, { pool: 2 }, [['settings', 'dsn']]), { pool: 2 });
  t.assert.throws(() => checkSettings(schema, { pool: 0 }, [['settings', 'dsn']]), /settings\.pool: must be >= 1/);
  t.assert.throws(() => checkSettings(schema, { pool: 2 }), /dsn/);
});
