// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ClusterProcess } from '../../tools/cluster-process.ts';
import { type CliRun, runCliInGroup } from '../helpers/cli.ts';
import { CLI, get, tempFiles } from '../helpers/cluster.ts';

/**
 * The service's own settings through the real CLI: `flotilla config` prints
 * them checked, with defaults, `${VAR}` interpolated and secrets redacted;
 * `config`, `openapi` and `start` refuse invalid ones with `file:line: key`
 * lines and exit 2; a running cluster serves what `app.settings` holds.
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

/** A service declaring its settings; `GET /settings` answers what it read from `app.settings`. */
const SERVICE = `import { defineService } from '${INDEX}';

export default defineService({
  settings: {
    type: 'object',
    additionalProperties: false,
    properties: {
      pool: { type: 'integer', minimum: 1, default: 10 },
      greeting: { type: 'string', default: 'hello' },
      region: { type: 'string' },
      dsn: { type: 'string', writeOnly: true },
      signingSeed: { type: 'string', secret: true },
    },
    required: ['dsn'],
  },
  setup(app) {
    const { pool, greeting, region, dsn } = app.settings;
    app.registerController({
      routes: () => [{ method: 'GET', path: '/settings', handler: () => ({ pool, greeting, region, dsnLength: dsn.length }) }],
    });
  },
});
`;

/** A service that declares no settings schema. */
const PLAIN_SERVICE = `import { defineService } from '${INDEX}';

export default defineService((app) => {
  app.registerController({ routes: () => [{ method: 'GET', path: '/plain', handler: () => ({ plain: true }) }] });
});
`;

/** Lines 1 to 8 of every config here: one worker, everything on 127.0.0.1 with OS-chosen ports. */
const HEAD = [
  'serviceName: settings-it',
  'host: 127.0.0.1',
  'port: 0',
  'workers: 1',
  'service: ./service.ts',
  'metrics:',
  '  host: 127.0.0.1',
  '  port: 0',
];

/** Valid settings from line 9 on: one default left out, two values from the environment, two secrets. */
const VALID_YAML = [
  ...HEAD,
  'settings:',
  '  region: ${SETTINGS_IT_REGION:-eu-west}',
  '  greeting: ${SETTINGS_IT_GREETING}',
  '  dsn: ${SETTINGS_IT_DSN}',
  '  signingSeed: seed-from-the-file',
  '',
].join('\n');

/** Invalid settings, one problem a line (9 to 12), the number 0 coming from the environment's default. */
const INVALID_YAML = [...HEAD, 'settings:', '  pool: ${SETTINGS_IT_POOL:-0}', '  greeting: 42', '  colour: blue', ''].join('\n');

/** The problems of INVALID_YAML, as the CLI prints them (the config file named as on the command line). */
const INVALID_LINES = [
  "app.yaml:9: settings: must have required property 'dsn'",
  'app.yaml:10: settings.pool: must be >= 1',
  'app.yaml:11: settings.greeting: must be string',
  'app.yaml:12: settings.colour: unknown key',
];

const DSN = 'postgres://app:hunter2@db.internal/app';

/** The environment of every run: the variables the YAML reads, and none it must find unset. */
function env(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, SETTINGS_IT_GREETING: 'bonjour', SETTINGS_IT_DSN: DSN };
  delete out['SETTINGS_IT_REGION'];
  delete out['SETTINGS_IT_POOL'];
  return out;
}

/** `flotilla <args>` in `dir` to its exit (`runCliInGroup`), with the test's environment. */
function flotilla(t: TestContext, dir: string, ...args: string[]): Promise<CliRun> {
  return runCliInGroup(t, args, { cwd: dir, env: env(), execArgv: ['--conditions=source'] });
}

/** Asserts that `text` has `line` as one of its lines, after the `  - ` of a problem list. */
function hasProblemLine(t: TestContext, text: string, line: string): void {
  t.assert.ok(text.split('\n').includes(`  - ${line}`), `expected the line '  - ${line}' in:\n${text}`);
}

test('config prints the settings checked: defaults applied, ${VAR} interpolated, writeOnly and secret values redacted', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': VALID_YAML });
  const run = await flotilla(t, dir, 'config', '--config', 'app.yaml');

  t.assert.strictEqual(run.code, 0, run.stderr);
  const config = JSON.parse(run.stdout) as { settings?: unknown; workers?: unknown };
  t.assert.deepStrictEqual(config.settings, {
    pool: 10,
    greeting: 'bonjour',
    region: 'eu-west',
    dsn: '[redacted]',
    signingSeed: '[redacted]',
  });
  t.assert.strictEqual(config.workers, 1, 'the rest of the config is there too');
  t.assert.doesNotMatch(run.stdout, /hunter2|db\.internal|seed-from-the-file/, 'no secret is printed, not even in part');
});

for (const command of ['config', 'openapi', 'start'] as const) {
  test(`${command} refuses invalid settings: exit 2, every problem as app.yaml:<line>: settings.<key>: <message>`, async (t: TestContext) => {
    const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': INVALID_YAML });
    const run = await flotilla(t, dir, command, '--config', 'app.yaml');

    t.assert.strictEqual(run.code, 2, `${run.stdout}\n${run.stderr}`);
    t.assert.match(run.stderr, /^flotilla: invalid configuration:$/m);
    for (const line of INVALID_LINES) hasProblemLine(t, run.stderr, line);
    const listed = run.stderr.split('\n').filter((l) => l.startsWith('  - app.yaml:'));
    t.assert.deepStrictEqual(
      listed,
      INVALID_LINES.map((l) => `  - ${l}`),
      'each problem once, in the order of the file',
    );
    if (command === 'start') {
      t.assert.ok(!run.stdout.includes('"worker listening"'), 'no worker served');
    } else {
      t.assert.strictEqual(run.stdout, '', 'nothing printed on stdout');
    }
  });
}

for (const command of ['config', 'openapi', 'start'] as const) {
  test(`${command}: settings for a service that declares no schema are refused, exit 2`, async (t: TestContext) => {
    const yaml = [...HEAD, 'settings:', '  pool: 3', ''].join('\n');
    const dir = tempFiles(t, { 'service.ts': PLAIN_SERVICE, 'app.yaml': yaml });
    const run = await flotilla(t, dir, command, '--config', 'app.yaml');

    t.assert.strictEqual(run.code, 2, `${run.stdout}\n${run.stderr}`);
    t.assert.match(
      run.stderr,
      /^ {2}- app\.yaml:9: settings: the service declares no settings schema: declare one with defineService\(\{ settings: schema, setup \}\)$/m,
    );
  });
}

test('start with valid settings: a route serves what it read from app.settings; SIGTERM exits 0', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': VALID_YAML });
  const cluster = new ClusterProcess({
    cli: CLI,
    execArgv: ['--conditions=source'],
    configFile: join(dir, 'app.yaml'),
    env: { SETTINGS_IT_GREETING: 'bonjour', SETTINGS_IT_DSN: DSN },
  });
  t.after(() => cluster.kill());
  await cluster.ready(1, 20_000);

  const reply = await get(cluster.appPort, '/settings');
  t.assert.strictEqual(reply.status, 200, reply.body);
  t.assert.deepStrictEqual(JSON.parse(reply.body), { pool: 10, greeting: 'bonjour', region: 'eu-west', dsnLength: DSN.length });

  cluster.signal('SIGTERM');
  const exit = await cluster.exit(15_000);
  t.assert.strictEqual(exit.code, 0, cluster.tail());
  await cluster.outputEnded();
  const stdout = cluster.lines.map((l) => JSON.stringify(l)).join('\n');
  t.assert.doesNotMatch(stdout, /hunter2|seed-from-the-file/, 'no secret in the logs');
});
