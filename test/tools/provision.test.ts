import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';

/**
 * `npm test` provisions the system tools (tools/provision.sh, its `pretest`) or says how to install
 * each missing one, and the tests needing a missing tool skip (test/helpers/require-tool.ts), except
 * under CI, where nothing may be skipped. FLOTILLA_ABSENT_TOOLS simulates missing tools.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const HELPER = pathToFileURL(resolve(ROOT, 'test/helpers/require-tool.ts')).href;

/** This environment without CI and FLOTILLA_ABSENT_TOOLS, plus `extra`. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { CI: _, FLOTILLA_ABSENT_TOOLS: __, ...rest } = process.env;
  return { ...rest, ...extra };
}

function provision(extra: Record<string, string>) {
  return spawnSync('bash', [resolve(ROOT, 'tools/provision.sh')], { env: envWith(extra), encoding: 'utf8' });
}

test('provision.sh: one line per missing tool saying how to install it; exit 0, or 1 under CI=true', (t: TestContext) => {
  const some = provision({ FLOTILLA_ABSENT_TOOLS: 'redis-server,podman' });
  t.assert.strictEqual(some.status, 0, some.stderr);
  t.assert.deepStrictEqual(some.stdout.trim().split('\n'), [
    'flotilla tests: no podman: its tests are skipped; install it with: sudo apt-get install -y podman runc debootstrap catatonit',
    'flotilla tests: no redis-server: its tests are skipped; install it with: sudo apt-get install -y redis-server',
  ]);
  t.assert.strictEqual(provision({ FLOTILLA_ABSENT_TOOLS: 'all' }).stdout.trim().split('\n').length, 9);
  const ci = provision({ FLOTILLA_ABSENT_TOOLS: 'postgresql', CI: 'true' });
  t.assert.strictEqual(ci.status, 1);
  t.assert.match(ci.stderr, /CI=true and postgresql missing/);
});

test('requireTool: a reason saying how to install a missing tool; a throw under CI', (t: TestContext) => {
  const run = (extra: Record<string, string>) =>
    spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `import { requireTool } from '${HELPER}'; console.log(JSON.stringify(requireTool('redis-server')));`],
      {
        env: envWith(extra),
        encoding: 'utf8',
      },
    );
  const skipped = run({ FLOTILLA_ABSENT_TOOLS: 'redis-server' });
  t.assert.strictEqual(
    JSON.parse(skipped.stdout),
    'redis-server is not installed: sudo apt-get install -y redis-server (npm test as root installs it)',
  );
  const ci = run({ FLOTILLA_ABSENT_TOOLS: 'all', CI: 'true' });
  t.assert.notStrictEqual(ci.status, 0);
  t.assert.match(ci.stderr, /redis-server is required when CI is set/);
});

test('.ci/run runs the README test command: npm ci, then npm test, which provisions first', (t: TestContext) => {
  const run = execFileSync('grep', ['-v', '^#', resolve(ROOT, '.ci/run')], { encoding: 'utf8' })
    .trim()
    .split('\n');
  t.assert.deepStrictEqual(run.slice(-2), ['npm ci --no-audit --no-fund', 'npm test']);
  const pkg = JSON.parse(execFileSync('cat', [resolve(ROOT, 'package.json')], { encoding: 'utf8' })) as { scripts: Record<string, string> };
  t.assert.strictEqual(pkg.scripts['pretest'], 'bash tools/provision.sh');
});
