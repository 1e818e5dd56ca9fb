// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.ts';
import { chooseEnv } from '../../src/config/env-default.ts';
import { configSecretProblems, passwordSpans, settingsFallbacksOf } from '../../src/config/fallback-secrets.ts';
import { loadConfig, loadConfigFile, START_ENV } from '../../src/config/load-file.ts';
import { readYaml } from '../../src/config/read-yaml.ts';
import { checkSettings } from '../../src/config/settings.ts';
import { resolveConfig } from '../../src/config/validate.ts';

const COOKIE = '${COOKIE_SECRET:-development-only-secret-not-for-production}';

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-secrets-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'app.yaml');
  writeFileSync(path, text);
  return path;
}

const messages = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.problems.map((p) => `${p.line}: ${p.key}: ${p.message}`);
  }
  return [];
};

test('the env: the config, then NODE_ENV (one of the three), then the command default, and the reason', () => {
  assert.deepEqual(chooseEnv('staging', 'production', START_ENV), { env: 'staging', reason: 'config env' });
  assert.deepEqual(chooseEnv(undefined, 'development', START_ENV), { env: 'development', reason: 'NODE_ENV' });
  assert.deepEqual(chooseEnv(undefined, undefined, START_ENV), { env: 'production', reason: "flotilla start's default; NODE_ENV unset" });
  assert.deepEqual(chooseEnv(undefined, 'test', START_ENV), {
    env: 'production',
    reason: `flotilla start's default; NODE_ENV="test" ignored`,
  });
});

test('the password spans of a coordination URL: user info and a password= in the query', () => {
  const at = (url: string) => passwordSpans(url).map(([s, e]) => url.slice(s, e));
  assert.deepEqual(at('redis://:pw@host:6379'), ['pw']);
  assert.deepEqual(at('postgres://user:p@ss@db/app'), ['p@ss']);
  assert.deepEqual(at('postgres://user@db/app?sslmode=require&password=x'), ['x']);
  assert.deepEqual(at('redis://host:6379'), []);
  assert.deepEqual(at('redis://user:@host'), []);
});

test('only a fallback in a secret is refused: cookies.secrets, the password of coordination.url', () => {
  const { fallbacks } = readYaml(
    [
      `cookies: { secrets: ["${COOKIE}", "set-one-\${SET:-x}"] }`,
      'coordination: { url: "redis://${USER_NAME:-app}:${PW}@${HOST:-localhost}:6379" }',
      'port: ${PORT:-3000}',
    ].join('\n'),
    { PW: 'real', SET: 'y' },
  );
  assert.deepEqual(
    configSecretProblems(fallbacks).map((p) => [p.key, p.message]),
    [['cookies.secrets[0]', 'in production this secret must come from COOKIE_SECRET, which is unset; the fallback is for development']],
  );
  const url = readYaml('coordination: { url: "redis://:${PW:-dev}@h" }', { PW: '' }).fallbacks;
  assert.deepEqual(
    configSecretProblems(url).map((p) => p.message),
    ['in production the password in this URL must come from PW, which is empty; the fallback is for development'],
  );
});

test('loadConfig refuses development secrets when the config is production, and only then', () => {
  const path = file(
    ['serviceName: s', 'cookies:', `  secrets: ["${COOKIE}"]`, 'coordination:', '  url: "${COORDINATION_URL:-}"', ''].join('\n'),
  );
  assert.deepEqual(
    messages(() => loadConfig(path, { env: { NODE_ENV: 'production' } })),
    ['3: cookies.secrets[0]: in production this secret must come from COOKIE_SECRET, which is unset; the fallback is for development'],
  );
  assert.deepEqual(messages(() => loadConfig(path, { env: {}, overrides: { env: 'production' } })).length, 1);
  // development (loadConfig's default, as a standalone App's), or the variable set: accepted
  assert.equal(loadConfig(path, { env: {} }).env, 'development');
  const secret = 'a-production-secret-of-32-characters!';
  assert.deepEqual(loadConfig(path, { env: { NODE_ENV: 'production', COOKIE_SECRET: secret } }).cookies.secrets, [secret]);
  // flotilla start's default, and a file whose only problems are secrets reported, not thrown
  const loaded = loadConfigFile(path, {}, { defaultEnv: START_ENV, secrets: 'report' });
  assert.equal(loaded.config.env, 'production');
  assert.deepEqual(
    loaded.secretProblems.map((p) => [p.line, p.key]),
    [[3, 'cookies.secrets[0]']],
  );
  assert.equal(loadConfigFile(path, {}, { defaultEnv: START_ENV, secrets: 'allow' }).secretProblems.length, 0);
});

test('an empty coordination.url is resolved as none', () => {
  const path = file(['coordination:', '  url: "${COORDINATION_URL:-}"', ''].join('\n'));
  assert.equal(loadConfig(path, { env: {} }).coordination.url, undefined);
  assert.equal(resolveConfig({ coordination: { url: '' } }).coordination.url, undefined);
  assert.equal(resolveConfig({ coordination: { url: 'redis://h' } }).coordination.url, 'redis://h');
});

test('the settings secrets on fallbacks are refused by the settings check of a production config', () => {
  const schema = {
    type: 'object',
    properties: {
      apiKey: { type: 'string', secret: true },
      db: { type: 'object', properties: { dsn: { type: 'string', writeOnly: true }, pool: { type: 'integer' } } },
      region: { type: 'string' },
    },
  };
  const text = [
    'settings:',
    '  apiKey: ${API_KEY:-dev-key}',
    '  db:',
    '    dsn: "${DSN:-}"',
    '    pool: ${POOL:-5}',
    '  region: ${REGION:-eu}',
    '',
  ];
  const path = file(text.join('\n'));
  const production = loadConfig(path, { env: { NODE_ENV: 'production' } });
  assert.deepEqual(
    settingsFallbacksOf(production).map((f) => f.path),
    [
      ['settings', 'apiKey'],
      ['settings', 'db', 'pool'],
      ['settings', 'region'],
    ],
  );
  assert.deepEqual(
    messages(() => checkSettings(schema, production.settings, [], settingsFallbacksOf(production))),
    ['undefined: settings.apiKey: in production this secret must come from API_KEY, which is unset; the fallback is for development'],
  );
  // development: nothing marked, nothing refused
  const development = loadConfig(path, { env: {} });
  assert.deepEqual(settingsFallbacksOf(development), []);
  assert.equal(checkSettings(schema, development.settings, [], settingsFallbacksOf(development))['apiKey'], 'dev-key');
});
