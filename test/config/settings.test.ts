import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App } from '../../src/app/app.ts';
import { defineService } from '../../src/app/define-service.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { adoptSettings, checkSettings, redactSettings, settingsOf, undeclaredSettings } from '../../src/config/settings.ts';
import { FlotillaError } from '../../src/errors/flotilla-error.ts';
import { loadService } from '../../src/process/load-service.ts';
import { sink } from '../helpers/sink.ts';

const PLAIN_SERVICE = fileURLToPath(new URL('../fixtures/settings/plain-service.ts', import.meta.url));
const DECLARED_SERVICE = fileURLToPath(new URL('../fixtures/settings/declared-service.ts', import.meta.url));

/** The problems of a `ConfigError` thrown by `fn`, as `key: message` lines; fails when `fn` throws nothing or something else. */
function problemsOf(t: TestContext, fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    t.assert.ok(error instanceof ConfigError, `a ConfigError, got ${String(error)}`);
    return error.problems.map((p) => `${p.key}: ${p.message}`);
  }
  t.assert.fail('expected a ConfigError');
}

/** Asserts the same problems, in any order. */
function sameProblems(t: TestContext, actual: readonly string[], expected: readonly string[]): void {
  t.assert.deepStrictEqual(actual.toSorted(), expected.toSorted());
}

/** An App on 127.0.0.1, logging nowhere visible, closed after the test. */
function appWith(t: TestContext, settings?: Record<string, unknown>): App {
  const app = new App(
    { port: 0, host: '127.0.0.1', ...(settings === undefined ? {} : { settings }) },
    { logStream: sink(), handleSignals: false },
  );
  t.after(() => app.close());
  return app;
}

test('checkSettings applies the defaults, at any depth, and returns a deeply frozen copy', (t: TestContext) => {
  const schema = {
    type: 'object',
    properties: {
      pool: { type: 'integer', default: 10 },
      db: { type: 'object', properties: { host: { type: 'string', default: 'localhost' }, port: { type: 'integer' } } },
      tags: { type: 'array', items: { type: 'string' }, default: ['a'] },
    },
  };
  const input = { db: { port: 5432 } };
  const settings = checkSettings(schema, input);

  t.assert.deepStrictEqual(settings, { pool: 10, db: { host: 'localhost', port: 5432 }, tags: ['a'] });
  t.assert.ok(Object.isFrozen(settings));
  t.assert.ok(Object.isFrozen(settings['db']));
  t.assert.ok(Object.isFrozen(settings['tags']));
  t.assert.deepStrictEqual(input, { db: { port: 5432 } }, 'the input gets no defaults');
  t.assert.ok(!Object.isFrozen(input) && !Object.isFrozen(input.db), 'the input is not frozen');
});

test('checkSettings reports every problem at once, each keyed under settings', (t: TestContext) => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      pool: { type: 'integer', minimum: 1 },
      url: { type: 'string', format: 'uri' },
      db: { type: 'object', properties: { port: { type: 'integer', maximum: 65535 } } },
      hosts: { type: 'array', items: { type: 'string' } },
      mode: { enum: ['fast', 'safe'] },
    },
    required: ['url'],
  };
  const problems = problemsOf(t, () =>
    checkSettings(schema, { pool: 0, db: { port: 70_000 }, hosts: ['a', 2], mode: 'slow', colour: 'blue' }),
  );

  sameProblems(t, problems, [
    "settings: must have required property 'url'",
    'settings.colour: unknown key',
    'settings.db.port: must be <= 65535',
    'settings.hosts[1]: must be string',
    'settings.mode: must be one of "fast", "safe"',
    'settings.pool: must be >= 1',
  ]);
});

test('checkSettings checks formats (ajv-formats) in the settings', (t: TestContext) => {
  const schema = { type: 'object', properties: { url: { type: 'string', format: 'uri' }, contact: { type: 'string', format: 'email' } } };
  const problems = problemsOf(t, () => checkSettings(schema, { url: 'not a uri', contact: 'nobody' }));
  sameProblems(t, problems, ['settings.contact: must match format "email"', 'settings.url: must match format "uri"']);
  t.assert.deepStrictEqual(checkSettings(schema, { url: 'https://example.com/' }), { url: 'https://example.com/' });
});

test('the schemas of several services compile in one process, each checked against its own', (t: TestContext) => {
  const a = { type: 'object', properties: { pool: { type: 'integer', default: 1 } } };
  const b = { type: 'object', properties: { pool: { type: 'string', default: 'one' } } };
  t.assert.deepStrictEqual(checkSettings(a, {}), { pool: 1 });
  t.assert.deepStrictEqual(checkSettings(b, {}), { pool: 'one' });
  t.assert.deepStrictEqual(
    problemsOf(t, () => checkSettings(a, { pool: 'x' })),
    ['settings.pool: must be integer'],
  );
  t.assert.deepStrictEqual(
    problemsOf(t, () => checkSettings(b, { pool: 2 })),
    ['settings.pool: must be string'],
  );
});

test('absent settings are validated as {}: defaults applied, required keys reported', (t: TestContext) => {
  const optional = { type: 'object', properties: { pool: { type: 'integer', default: 10 } } };
  t.assert.deepStrictEqual(checkSettings(optional, undefined), { pool: 10 });

  const required = { type: 'object', properties: { url: { type: 'string' }, user: { type: 'string' } }, required: ['url', 'user'] };
  sameProblems(
    t,
    problemsOf(t, () => checkSettings(required, undefined)),
    ["settings: must have required property 'url'", "settings: must have required property 'user'"],
  );
});

test('settings that are not an object are one problem on settings itself', (t: TestContext) => {
  const schema = { type: 'object', properties: { pool: { type: 'integer' } } };
  t.assert.deepStrictEqual(
    problemsOf(t, () => checkSettings(schema, 'pool=3')),
    ['settings: must be object'],
  );
});

test('secret: true is an annotation the compiler accepts, with no strict-mode complaint', (t: TestContext) => {
  const warn = t.mock.method(console, 'warn', () => {});
  const error = t.mock.method(console, 'error', () => {});
  const log = t.mock.method(console, 'log', () => {});
  const schema = {
    type: 'object',
    properties: { key: { type: 'string', secret: true }, nested: { type: 'object', secret: true, properties: { a: { type: 'string' } } } },
  };
  t.assert.deepStrictEqual(checkSettings(schema, { key: 'k', nested: { a: 'x' } }), { key: 'k', nested: { a: 'x' } });
  t.assert.deepStrictEqual(
    problemsOf(t, () => checkSettings(schema, { key: 1 })),
    ['settings.key: must be string'],
  );
  t.assert.strictEqual(warn.mock.callCount() + error.mock.callCount() + log.mock.callCount(), 0, 'nothing logged by the compiler');
});

test('redactSettings redacts writeOnly and secret values under properties, at any depth', (t: TestContext) => {
  const schema = {
    type: 'object',
    properties: {
      dsn: { type: 'string', writeOnly: true },
      db: {
        type: 'object',
        properties: { host: { type: 'string' }, password: { type: 'string', secret: true }, port: { type: 'integer', writeOnly: true } },
      },
      vault: { type: 'object', secret: true },
      flags: { type: 'object', properties: { on: { type: 'boolean', writeOnly: false } } },
    },
  };
  const value = { dsn: 'postgres://u:p@db/app', db: { host: 'db', password: 'hunter2', port: 5432 }, vault: { a: 1 }, flags: { on: true } };

  t.assert.deepStrictEqual(redactSettings(schema, value), {
    dsn: '[redacted]',
    db: { host: 'db', password: '[redacted]', port: '[redacted]' },
    vault: '[redacted]',
    flags: { on: true },
  });
  t.assert.deepStrictEqual(value.db, { host: 'db', password: 'hunter2', port: 5432 }, 'the value itself is untouched');
});

test('redactSettings follows items, additionalProperties and patternProperties', (t: TestContext) => {
  const schema = {
    type: 'object',
    properties: {
      accounts: {
        type: 'array',
        items: { type: 'object', properties: { user: { type: 'string' }, key: { type: 'string', secret: true } } },
      },
      tokens: { type: 'array', items: { type: 'string', writeOnly: true } },
      peers: {
        type: 'object',
        additionalProperties: { type: 'object', properties: { url: { type: 'string' }, pin: { writeOnly: true } } },
      },
      env: {
        type: 'object',
        properties: { PLAIN_KEY: { type: 'string' } },
        patternProperties: { _KEY$: { type: 'string', secret: true } },
        additionalProperties: { type: 'string' },
      },
    },
  };
  const value = {
    accounts: [
      { user: 'a', key: 'ka' },
      { user: 'b', key: 'kb' },
    ],
    tokens: ['t1', 't2'],
    peers: { east: { url: 'https://east', pin: '1234' }, west: { url: 'https://west' } },
    env: { PLAIN_KEY: 'declared, so shown', API_KEY: 'k', REGION: 'eu' },
  };

  t.assert.deepStrictEqual(redactSettings(schema, value), {
    accounts: [
      { user: 'a', key: '[redacted]' },
      { user: 'b', key: '[redacted]' },
    ],
    tokens: ['[redacted]', '[redacted]'],
    peers: { east: { url: 'https://east', pin: '[redacted]' }, west: { url: 'https://west' } },
    env: { PLAIN_KEY: 'declared, so shown', API_KEY: '[redacted]', REGION: 'eu' },
  });
});

test('redactSettings follows the branches of allOf and anyOf', (t: TestContext) => {
  const schema = {
    type: 'object',
    allOf: [
      { properties: { password: { type: 'string', writeOnly: true } } },
      { properties: { db: { type: 'object', properties: { secretKey: { type: 'string', secret: true } } } } },
    ],
    properties: { name: { type: 'string' } },
    anyOf: [{ properties: { token: { type: 'string', secret: true } }, required: ['token'] }, { properties: { cert: { type: 'string' } } }],
  };
  const value = { name: 'svc', password: 'p', db: { secretKey: 's', host: 'h' }, token: 't', cert: 'c' };

  t.assert.deepStrictEqual(redactSettings(schema, value), {
    name: 'svc',
    password: '[redacted]',
    db: { secretKey: '[redacted]', host: 'h' },
    token: '[redacted]',
    cert: 'c',
  });
});

test('redactSettings leaves absent secrets absent and values without a schema as they are', (t: TestContext) => {
  const schema = { type: 'object', properties: { dsn: { type: 'string', writeOnly: true }, pool: { type: 'integer' } } };
  t.assert.deepStrictEqual(redactSettings(schema, { pool: 3 }), { pool: 3 });
  t.assert.ok(!Object.hasOwn(redactSettings(schema, { pool: 3 }) as object, 'dsn'));
  t.assert.deepStrictEqual(redactSettings(undefined, { dsn: 'x' }), { dsn: 'x' });
  t.assert.strictEqual(redactSettings(schema, 'text'), 'text');
});

test('settingsOf: the config settings as given, {} when absent, the adopted ones once adopted', (t: TestContext) => {
  const owner = {};
  const empty = settingsOf(owner, {});
  t.assert.deepStrictEqual(empty, {});
  t.assert.ok(Object.isFrozen(empty));
  t.assert.deepStrictEqual(settingsOf(owner, { settings: { pool: 'raw' } }), { pool: 'raw' });
  adoptSettings(owner, Object.freeze({ pool: 10 }));
  t.assert.deepStrictEqual(settingsOf(owner, { settings: { pool: 'raw' } }), { pool: 10 });
  t.assert.deepStrictEqual(settingsOf({}, { settings: { pool: 'raw' } }), { pool: 'raw' }, 'adoption is per owner');
});

test('undeclaredSettings is one problem on settings that says how to declare them', (t: TestContext) => {
  const error = undeclaredSettings();
  t.assert.ok(error instanceof ConfigError);
  t.assert.deepStrictEqual(
    error.problems.map((p) => p.key),
    ['settings'],
  );
  t.assert.match(error.message, /settings: the service declares no settings schema.*defineService\(\{ settings: schema, setup \}\)/);
});

test('defineService refuses a definition without a setup, a bad settings schema or logger: FLO_ERR_BAD_SERVICE_SETUP', (t: TestContext) => {
  const schema = { type: 'object' };
  for (const bad of [
    undefined,
    null,
    42,
    {},
    { settings: schema },
    { logger: () => undefined },
    { logger: 'pino', setup() {} },
    { settings: null, setup() {} },
    { settings: 'object', setup() {} },
    { settings: schema, setup: 'not a function' },
  ]) {
    t.assert.throws(
      () => defineService(bad as never),
      (error: unknown) =>
        error instanceof FlotillaError &&
        error instanceof TypeError &&
        error.code === 'FLO_ERR_BAD_SERVICE_SETUP' &&
        /settings\?: schema/.test(error.message),
      `refused: ${String(bad)}`,
    );
  }
});

test('defineService returns a plain setup function as it is, with no settings schema', (t: TestContext) => {
  const setup = (_app: App) => {};
  const defined = defineService(setup);
  t.assert.strictEqual(defined, setup);
  t.assert.strictEqual(defined.settingsSchema, undefined);
});

test('a setup with settings validates app.config.settings first and exposes them as app.settings', async (t: TestContext) => {
  const schema = {
    type: 'object',
    properties: { pool: { type: 'integer', default: 10 }, name: { type: 'string' } },
    required: ['name'],
  } as const;
  let seen: unknown;
  const setup = defineService({
    settings: schema,
    setup(app) {
      seen = app.settings;
      app.registerController({ routes: () => [{ method: 'GET', path: '/pool', handler: () => ({ pool: app.settings.pool }) }] });
    },
  });
  t.assert.strictEqual(setup.settingsSchema, schema);

  const app = appWith(t, { name: 'books' });
  t.assert.deepStrictEqual(app.settings, { name: 'books' }, 'before the setup: the config as given');
  await setup(app);

  t.assert.deepStrictEqual(seen, { name: 'books', pool: 10 }, 'the setup reads the validated settings');
  t.assert.strictEqual(app.settings, seen);
  t.assert.ok(Object.isFrozen(app.settings));
  t.assert.deepStrictEqual(app.config.settings, { name: 'books' }, 'the config itself keeps what was given');
  const reply = await app.inject('/pool');
  t.assert.strictEqual(reply.statusCode, 200);
  t.assert.deepStrictEqual(reply.json(), { pool: 10 });
});

test('a setup with settings refuses invalid settings with every problem, before the service code runs', async (t: TestContext) => {
  let ran = false;
  const setup = defineService({
    settings: { type: 'object', properties: { pool: { type: 'integer' } }, required: ['name'] },
    setup() {
      ran = true;
    },
  });

  const app = appWith(t, { pool: 'many' });
  const refused = await Promise.resolve()
    .then(() => setup(app))
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  t.assert.ok(refused instanceof ConfigError, `a ConfigError, got ${String(refused)}`);
  sameProblems(
    t,
    refused.problems.map((p) => `${p.key}: ${p.message}`),
    ["settings: must have required property 'name'", 'settings.pool: must be integer'],
  );
  await t.assert.rejects(async () => setup(appWith(t)), ConfigError, 'absent settings are checked as {}');
  t.assert.strictEqual(ran, false);
});

test('app.settings is typed from the schema (json-schema-to-ts)', async (t: TestContext) => {
  const schema = { type: 'object', properties: { pool: { type: 'integer', default: 10 } }, required: ['pool'] } as const;
  let pool = 0;
  const setup = defineService({
    settings: schema,
    setup(app) {
      pool = app.settings.pool;
      // @ts-expect-error pool is a number
      const text: string = app.settings.pool;
      // @ts-expect-error a number has no string methods
      app.settings.pool.toUpperCase?.();
      void text;
    },
  });
  await setup(appWith(t, {}));
  t.assert.strictEqual(pool, 10);
});

test('loadService: a plain setup refuses a config with settings (a ConfigError naming settings)', async (t: TestContext) => {
  const setup = await loadService<App>(PLAIN_SERVICE);
  t.assert.strictEqual(setup.settingsSchema, undefined);

  const withSettings = appWith(t, { pool: 3 });
  await t.assert.rejects(
    async () => setup(withSettings),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.length === 1 &&
      error.problems[0]?.key === 'settings' &&
      /declares no settings schema/.test(error.problems[0].message),
  );
  t.assert.ok(!withSettings.routes.some((route) => route.path === '/plain'), 'the service code did not run');

  const without = appWith(t);
  await setup(without);
  t.assert.deepStrictEqual((await without.inject('/plain')).json(), { plain: true });
});

test('loadService: a setup with declared settings comes with its schema and validates the config', async (t: TestContext) => {
  const setup = await loadService<App>(DECLARED_SERVICE);
  t.assert.strictEqual((setup.settingsSchema as { type?: unknown } | undefined)?.type, 'object');

  const app = appWith(t, { dsn: 'postgres://db/app' });
  await setup(app);
  t.assert.deepStrictEqual(app.settings, { dsn: 'postgres://db/app', pool: 10 });
  t.assert.deepStrictEqual((await app.inject('/pool')).json(), { pool: 10 });

  await t.assert.rejects(async () => setup(appWith(t, { pool: 0 })), /settings\.pool: must be >= 1/);
});

test('redactSettings follows local $refs, then and else: a secret declared once in $defs stays secret', (t: TestContext) => {
  const schema = {
    $defs: { secret: { type: 'string', writeOnly: true }, db: { type: 'object', properties: { password: { $ref: '#/$defs/secret' } } } },
    type: 'object',
    properties: { db: { $ref: '#/$defs/db' }, token: { $ref: '#/$defs/secret' }, mode: { type: 'string' } },
    if: { properties: { mode: { const: 'a' } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
    then: { properties: { apiKeyA: { secret: true } } },
  };
  const out = redactSettings(schema, { db: { password: 'p', host: 'h' }, token: 't', mode: 'a', apiKeyA: 'k' });
  t.assert.deepStrictEqual(out, { db: { password: '[redacted]', host: 'h' }, token: '[redacted]', mode: 'a', apiKeyA: '[redacted]' });
});
