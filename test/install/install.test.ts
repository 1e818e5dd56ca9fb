import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { get } from '../../tools/fresh-get.ts';
import { groupAlive, logLines, NPM_FLAGS, once, packageSources, run, startService } from '../helpers/user-project.ts';

/**
 * The three installs of the first-service guide's Install section, done as a user does them,
 * each checked for a working `import { App } from 'flotilla'`, `npx flotilla
 * --version` and `npx flotilla config`; then, in the tarball's project,
 * `npx flotilla init`, after which `npm test`, `tsc` and `npm start` work.
 * "The repository" is the work tree as a fresh clone would have it: the files
 * git tracks or would add, committed to a throwaway repository. Installs use
 * the npm cache first (`--prefer-offline`) and run concurrently.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };

const work = mkdtempSync(join(tmpdir(), 'flotilla-install-'));
after(() => rmSync(work, { recursive: true, force: true }));

const { source, clone, tarball } = packageSources(work);

/** A new project, as `npm init` leaves it (npm 11: `"type": "commonjs"`), with `spec` installed. */
async function project(name: string, spec: () => Promise<string>): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir);
  const pkg = { name, version: '1.0.0', type: 'commonjs', scripts: { test: 'echo "Error: no test specified" && exit 1' } };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  await run(dir, 'npm', ['install', ...NPM_FLAGS, await spec()]);
  return dir;
}

const tarballProject = once(async () => project('from-tarball', tarball));

/** What every install must give: a working `App` from 'flotilla', and the CLI. */
async function checkInstall(t: TestContext, dir: string, { linked = false } = {}): Promise<void> {
  const probe = [
    "import { App } from 'flotilla';",
    "const app = new App({ serviceName: 'probe', logging: { level: 'silent' } });",
    "const res = await app.inject('/health');",
    'await app.close();',
    'console.log(typeof App, res.statusCode);',
  ].join('\n');
  const imported = await run(dir, process.execPath, ['--input-type=module', '-e', probe]);
  t.assert.strictEqual(imported.stdout.trim(), 'function 200');

  const version = await run(dir, 'npx', ['--no', '--', 'flotilla', '--version']);
  t.assert.strictEqual(version.stdout.trim(), `flotilla ${PKG.version}`);

  // the peer dependency, installed by npm itself although the project asked for flotilla alone (a linked
  // directory resolves it from the clone's own node_modules instead; the App's import above needs it either way)
  if (!linked) {
    const api = JSON.parse(readFileSync(join(dir, 'node_modules/@opentelemetry/api/package.json'), 'utf8')) as { version: string };
    t.assert.match(api.version, /^1\.(9|[1-9]\d)\.\d+$/, 'npm installed @opentelemetry/api (^1.9.0) into the project');
  }

  writeFileSync(join(dir, 'probe.yaml'), 'serviceName: probe\nport: 8080\n');
  const config = await run(dir, 'npx', ['--no', '--', 'flotilla', 'config', '--config', 'probe.yaml']);
  const effective = JSON.parse(config.stdout) as { serviceName: string; port: number };
  t.assert.strictEqual(effective.serviceName, 'probe');
  t.assert.strictEqual(effective.port, 8080);
}

describe('installs from the docs', { concurrency: true, timeout: 900_000 }, () => {
  test('a directory: npm install <clone in which npm install was run>', async (t: TestContext) => {
    const dir = await project('from-directory', clone);
    await checkInstall(t, dir, { linked: true });
  });

  test('git: npm install git+file://<repository>', async (t: TestContext) => {
    const dir = await project('from-git', async () => `git+${pathToFileURL(await source()).href}`);
    await checkInstall(t, dir);
  });

  test('a tarball: npm install <npm pack of a clone>', async (t: TestContext) => {
    await checkInstall(t, await tarballProject());
  });

  test("with today's OpenTelemetry SDK: npm install @opentelemetry/sdk-node succeeds, one copy of the API", async (t: TestContext) => {
    const dir = await project('with-sdk', tarball);
    await run(dir, 'npm', ['install', ...NPM_FLAGS, '@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-http']);
    const { stdout } = await run(dir, 'npm', ['query', '[name="@opentelemetry/api"]']);
    const copies = (JSON.parse(stdout) as { path: string; version: string }[]).map((p) => p.version);
    t.assert.strictEqual(copies.length, 1, `one copy of @opentelemetry/api, shared by flotilla and the SDK (found ${copies.join(', ')})`);
  });

  test('then npx flotilla init: npm test passes, tsc checks, npm start serves and stops on SIGTERM', async (t: TestContext) => {
    const dir = await tarballProject();
    const init = await run(dir, 'npx', ['--no', '--', 'flotilla', 'init']);
    t.assert.match(init.stdout, /wrote app\.yaml, src\/service\.ts, test\/service\.test\.ts, tsconfig\.json/);

    const tested = await run(dir, 'npm', ['test']);
    t.assert.match(tested.stdout, /pass 4/);
    t.assert.match(tested.stdout, /fail 0/);

    const { typescript, '@types/node': types } = PKG.devDependencies;
    await run(dir, 'npm', ['install', ...NPM_FLAGS, '--save-dev', `typescript@${typescript}`, `@types/node@${types}`]);
    await run(dir, 'npx', ['--no', '--', 'tsc', '-p', '.']);

    const started = startService(t, dir);
    const port = await started.port;
    const health = await get(port, '/health');
    t.assert.strictEqual(health.status, 200, health.body);
    const items = await get(port, '/items?page=2&limit=5');
    t.assert.strictEqual(items.status, 200, items.body);
    const page = JSON.parse(items.body) as { data: { id: number }[]; page: number; limit: number; total: number; total_pages: number };
    t.assert.deepStrictEqual(
      { ids: page.data.map((item) => item.id), page: page.page, limit: page.limit },
      { ids: [6, 7, 8, 9, 10], page: 2, limit: 5 },
    );
    t.assert.strictEqual(page.total_pages, Math.ceil(page.total / 5));

    started.child.kill('SIGTERM'); // npm only, as a process manager does: the script's `exec` hands it to the primary
    const [code, signal] = await started.exit;
    t.assert.deepStrictEqual({ code, signal }, { code: 0, signal: null }, started.output());
    const done = logLines(started.stdout()).find((line) => line['msg'] === 'primary shutdown: done');
    t.assert.strictEqual(done?.['ok'], true, `a clean shutdown${started.output()}`);
    t.assert.strictEqual(groupAlive(started.child.pid!), false, 'no process of npm start is left');
  });
});
