import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCliInGroup } from '../helpers/cli.ts';
import { tempFiles } from '../helpers/cluster.ts';

/**
 * `pg` and `@redis/client` are optional peer dependencies: a service installs the one its
 * `coordination.url` names. Without it, `flotilla start` and `flotilla dev` stop before any port
 * opens, exit 2, with a config error at `coordination.url` that names the package to install.
 *
 * flotilla is run here as an install without them has it: its sources and package.json in a
 * folder of their own, whose node_modules links every package of this checkout but those two.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LEFT_OUT = new Set(['pg', '@redis']);
let install: string;

before(() => {
  install = mkdtempSync(join(tmpdir(), 'flotilla-no-clients-'));
  cpSync(join(ROOT, 'src'), join(install, 'src'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(install, 'package.json'));
  mkdirSync(join(install, 'node_modules'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (!LEFT_OUT.has(name)) symlinkSync(join(ROOT, 'node_modules', name), join(install, 'node_modules', name));
  }
  // what the test stands on: from there, neither client can be found
  const resolveThere = createRequire(join(install, 'src/coordination/import-client.ts')).resolve;
  for (const name of ['pg', '@redis/client']) assert.throws(() => resolveThere(name), { code: 'MODULE_NOT_FOUND' });
});

after(() => rmSync(install, { recursive: true, force: true }));

/** The config, with `coordination.url` on line 7. */
function project(t: TestContext, url: string): string {
  const yaml = [
    'serviceName: clients',
    'host: 127.0.0.1',
    'port: 0',
    'workers: 1',
    'metrics: { host: 127.0.0.1, port: 0 }',
    'coordination:',
    `  url: ${url}`,
    'service: ./service.js',
    '',
  ].join('\n');
  return tempFiles(t, { 'app.yaml': yaml, 'service.js': 'export default function setup() {}\n' });
}

async function run(t: TestContext, command: 'start' | 'dev', url: string) {
  const cwd = project(t, url);
  return runCliInGroup(t, [command, '--config', 'app.yaml'], {
    cwd,
    cli: join(install, 'src/cli/main.ts'),
    execArgv: ['--conditions=source'],
  });
}

test('start with a redis:// URL and no @redis/client: exit 2 at coordination.url, naming the package, no port opened', async (t) => {
  const { code, stdout, stderr } = await run(t, 'start', 'redis://127.0.0.1:6379');
  assert.equal(code, 2, stderr);
  assert.match(
    stderr,
    /^flotilla: invalid configuration:\n {2}- app\.yaml:7: coordination\.url: is a redis:\/\/ URL: install @redis\/client \(npm install @redis\/client\), an optional peer dependency of flotilla\n$/,
  );
  assert.equal(stdout, '', 'the primary stopped before it logged, forked or listened');
});

test('dev with a postgres:// URL and no pg: the same stop, naming pg', async (t) => {
  const { code, stdout, stderr } = await run(t, 'dev', 'postgresql://app@127.0.0.1:5432/app');
  assert.equal(code, 2, stderr);
  assert.match(stderr, /app\.yaml:7: coordination\.url: is a postgresql:\/\/ URL: install pg \(npm install pg\)/);
  assert.doesNotMatch(stderr, /ERR_MODULE_NOT_FOUND|\n\s+at /, 'no stack trace about module resolution');
  assert.equal(stdout, '');
});

test('without coordination.url, neither client is needed: the config reads as ever', async (t) => {
  const cwd = tempFiles(t, {
    'app.yaml': 'serviceName: clients\nservice: ./service.js\n',
    'service.js': 'export default function setup() {}\n',
  });
  const { code, stderr } = await runCliInGroup(t, ['config', '--config', 'app.yaml'], {
    cwd,
    cli: join(install, 'src/cli/main.ts'),
    execArgv: ['--conditions=source'],
  });
  assert.equal(code, 0, stderr);
});
