// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} interpolation syntax, on purpose
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ClusterProcess } from '../../tools/cluster-process.ts';
import { type CliRun, runCliInGroup } from '../helpers/cli.ts';
import { CLI, get, tempFiles } from '../helpers/cluster.ts';
import { Dev } from '../helpers/dev.ts';

/**
 * `flotilla start` is safe on its defaults, through the real CLI: it runs as `production` unless
 * the config's `env` or `NODE_ENV` says otherwise (no docs, no error detail), and refuses to
 * start on a secret left on its development fallback, naming each at once; `flotilla dev` runs as
 * `development` and refuses nothing; an empty `coordination.url` is no coordinator.
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

/** Two secret settings (`secret`, `writeOnly`), one that is not; `GET /boom` throws an internal error. */
const SERVICE = `import { defineService } from '${INDEX}';

export default defineService({
  settings: {
    type: 'object',
    additionalProperties: false,
    properties: {
      apiKey: { type: 'string', secret: true },
      dsn: { type: 'string', writeOnly: true },
      region: { type: 'string' },
    },
  },
  setup(app) {
    app.registerController({
      routes: () => [
        { method: 'GET', path: '/region', handler: () => ({ region: app.settings.region ?? null }) },
        { method: 'GET', path: '/boom', handler: () => { throw new Error('internal detail: db password is hunter2'); } },
      ],
    });
  },
});
`;

/** Lines 1 to 8 of every config: one worker, everything on 127.0.0.1 with OS-chosen ports. */
const HEAD = [
  'serviceName: prod-it',
  'host: 127.0.0.1',
  'port: 0',
  'workers: 1',
  'service: ./service.ts',
  'metrics:',
  '  host: 127.0.0.1',
  '  port: 0',
];

const yaml = (...lines: string[]) => [...HEAD, ...lines, ''].join('\n');

/** `NODE_ENV` empty: unset, as far as flotilla is concerned (the variables the configs read are never set). */
const UNSET = { NODE_ENV: '' };

/** `flotilla <args>` in `dir` to its exit (`runCliInGroup`), with `env` over this process's. */
function flotilla(t: TestContext, dir: string, env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return runCliInGroup(t, args, { cwd: dir, env: { ...process.env, ...UNSET, ...env } });
}

/** `flotilla start` on `text`, until its worker listens; stopped after the test. */
async function started(t: TestContext, text: string, env: Record<string, string> = {}): Promise<ClusterProcess> {
  const dir = tempFiles(t, { 'app.yaml': text, 'service.ts': SERVICE });
  const cluster = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml'), env: { ...UNSET, ...env } });
  t.after(() => cluster.kill());
  return cluster.ready(1, 30_000);
}

/** Whether the cluster answers as production does: no docs, an internal error without its message. */
async function looksLike(cluster: ClusterProcess): Promise<{ docs: number; detail: string }> {
  const docs = await get(cluster.appPort, '/docs');
  const boom = await get(cluster.appPort, '/boom');
  return { docs: docs.status, detail: String((JSON.parse(boom.body) as { detail?: unknown }).detail) };
}

const refusal = (line: number, key: string, variable: string, what = 'this secret') =>
  `  - app.yaml:${line}: ${key}: in production ${what} must come from ${variable}, which is unset; the fallback is for development`;

test('flotilla start refuses every secret left on its development fallback at once, with exit 2 and file:line', async (t: TestContext) => {
  const text = yaml(
    'cookies:',
    '  secrets: ["${PD_COOKIE_SECRET:-development-only-secret-not-for-production}"]',
    'coordination:',
    '  url: redis://:${PD_PASSWORD:-devpassword}@127.0.0.1:1',
    'settings:',
    '  apiKey: ${PD_API_KEY:-dev-key}',
    '  dsn: "postgres://app:${PD_DSN:-dev}@db/app"',
    '  region: ${PD_REGION:-eu-west}',
  );
  const dir = tempFiles(t, { 'app.yaml': text, 'service.ts': SERVICE });
  const run = await flotilla(t, dir, {}, 'start', '--config', 'app.yaml');
  t.assert.strictEqual(run.code, 2, run.stderr);
  const lines = run.stderr.split('\n');
  for (const line of [
    refusal(10, 'cookies.secrets[0]', 'PD_COOKIE_SECRET'),
    refusal(12, 'coordination.url', 'PD_PASSWORD', 'the password in this URL'),
    refusal(14, 'settings.apiKey', 'PD_API_KEY'),
    refusal(15, 'settings.dsn', 'PD_DSN'),
  ]) {
    t.assert.ok(lines.includes(line), `expected ${JSON.stringify(line)} in:\n${run.stderr}`);
  }
  // a setting that is no secret may keep its fallback; no worker was started
  t.assert.doesNotMatch(run.stderr, /settings\.region/);
  t.assert.doesNotMatch(run.stdout, /worker listening/);
});

test('a settings secret alone on its fallback stops the start (exit 2, file:line) from the worker', async (t: TestContext) => {
  for (const [key, variable] of [
    ['apiKey', 'PD_API_KEY'],
    ['dsn', 'PD_DSN'],
  ] as const) {
    const dir = tempFiles(t, { 'app.yaml': yaml('settings:', `  ${key}: \${${variable}:-for-development}`), 'service.ts': SERVICE });
    const run = await flotilla(t, dir, {}, 'start', '--config', 'app.yaml');
    t.assert.strictEqual(run.code, 2, run.stderr);
    t.assert.match(
      run.stderr,
      new RegExp(`app\\.yaml:10: settings\\.${key}: in production this secret must come from ${variable}, which is unset`),
    );
  }
});

test('with the variables set, or empty fallbacks, the same secrets start in production', async (t: TestContext) => {
  const cluster = await started(
    t,
    yaml(
      'cookies:',
      '  secrets: ["${PD_COOKIE_SECRET:-development-only-secret-not-for-production}"]',
      'coordination:',
      '  url: "${PD_COORDINATION_URL:-}"',
      'settings:',
      '  apiKey: ${PD_API_KEY:-dev-key}',
      '  dsn: "${PD_DSN:-}"',
      '  region: ${PD_REGION:-eu-west}',
    ),
    { PD_COOKIE_SECRET: 'a-production-secret-of-32-characters-or-more', PD_API_KEY: 'production-key' },
  );
  t.assert.deepStrictEqual(JSON.parse((await get(cluster.appPort, '/region')).body), { region: 'eu-west' });
  t.assert.ok(
    cluster.lines.some((l) => l.msg === "env production (flotilla start's default; NODE_ENV unset)"),
    cluster.tail(),
  );
});

test('flotilla start runs as production without NODE_ENV: no /docs, no error detail', async (t: TestContext) => {
  const cluster = await started(t, yaml());
  t.assert.deepStrictEqual(await looksLike(cluster), { docs: 404, detail: 'An internal error occurred.' });
});

test('NODE_ENV=development or the config env: development runs as development, and says why', async (t: TestContext) => {
  for (const [text, env, reason] of [
    [yaml(), { NODE_ENV: 'development' }, 'env development (NODE_ENV)'],
    [yaml('env: development'), { NODE_ENV: 'production' }, 'env development (config env)'],
  ] as const) {
    const cluster = await started(t, text, env);
    const seen = await looksLike(cluster);
    t.assert.strictEqual(seen.docs, 200);
    t.assert.match(seen.detail, /internal detail/);
    t.assert.ok(
      cluster.lines.some((l) => l.msg === reason),
      cluster.tail(),
    );
    cluster.kill();
  }
});

test('flotilla dev runs as development and refuses no development secret', async (t: TestContext) => {
  const dir = tempFiles(t, {
    'app.yaml': yaml(
      'cookies:',
      '  secrets: ["${PD_COOKIE_SECRET:-development-only-secret-not-for-production}"]',
      'settings:',
      '  apiKey: ${PD_API_KEY:-dev-key}',
    ),
    'service.ts': SERVICE,
  });
  const dev = new Dev(t, dir, UNSET);
  const banner = await dev.until(() => /^ {2}API\s+http:\/\/127\.0\.0\.1:(\d+)\/$/m.exec(dev.stdout) ?? undefined, 'the banner');
  t.assert.strictEqual((await get(Number(banner[1]), '/docs')).status, 200);
  t.assert.match(dev.stdout, /env development \(flotilla dev's default; NODE_ENV unset\)/);
});

test('an empty coordination.url starts no coordinator: nothing is retried', async (t: TestContext) => {
  const cluster = await started(t, yaml('coordination:', '  url: "${PD_COORDINATION_URL:-}"'));
  t.assert.strictEqual((await get(cluster.appPort, '/region')).status, 200);
  // the primary connects to the other replicas only with a coordinator: no attempt, so no retry, is logged
  t.assert.ok(!cluster.lines.some((l) => /coordinat|replica/i.test(String(l.msg))), cluster.tail());
  t.assert.doesNotMatch(cluster.stderr, /ECONNREFUSED|coordinat/i);
});
