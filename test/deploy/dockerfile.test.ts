import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { run } from '../helpers/user-project.ts';

// No Docker engine runs the tests: check what the image depends on instead.
const root = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
let image: string;

/** The exec-form array of a Dockerfile instruction (the last one of the final stage). */
function execForm(instruction: string): string[] {
  const lines = dockerfile.split('\n').filter((l) => l.startsWith(`${instruction} `));
  const last = lines.at(-1);
  if (last === undefined) throw new Error(`no ${instruction} in the Dockerfile`);
  return JSON.parse(last.slice(instruction.length + 1)) as string[];
}

before(() => {
  // Lay out a copy of what the final image contains: dist (built by tsc), package.json, config, examples, node_modules.
  image = mkdtempSync(join(tmpdir(), 'flotilla-image-'));
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(image, 'dist')],
    {
      stdio: 'pipe',
    },
  );
  for (const part of ['package.json', 'config', 'examples']) cpSync(join(root, part), join(image, part), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(image, 'node_modules'));
});

after(() => rmSync(image, { recursive: true, force: true }));

test('CMD starts the primary directly, in exec form, from a file the build produces', () => {
  const cmd = execForm('CMD');
  assert.equal(cmd[0], 'node', 'not through npm, which does not forward signals');
  assert.deepEqual(cmd.slice(2), ['start', '--config', 'config/app.yaml']);
  assert.ok(existsSync(join(image, cmd[1]!)), `${cmd[1]} exists in the build output`);
  assert.ok(existsSync(join(image, cmd[3 + 1]!)), 'the config file is in the image');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
    exports: Record<string, Record<string, string>>;
  };
  assert.ok(existsSync(join(image, pkg.bin['flotilla']!)), 'the bin entry exists in the build output');
  assert.ok(existsSync(join(image, pkg.exports['.']!['default']!)), 'the main export exists');
  assert.ok(existsSync(join(image, pkg.exports['.']!['types']!)), 'the declarations exist');
});

test('the built CLI runs the example the way the image does', () => {
  const out = execFileSync(process.execPath, [join(image, 'dist/cli/main.js'), 'openapi', '--config', 'config/app.yaml'], {
    cwd: image,
    env: { ...process.env, NODE_ENV: 'production' },
    encoding: 'utf8',
  });
  const doc = JSON.parse(out) as { paths: Record<string, unknown> };
  assert.ok('/api/books' in doc.paths, 'the example service loads from the built package');
});

test('the image is hardened: non-root user, STOPSIGNAL, HEALTHCHECK without curl, slim base, production deps', () => {
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^STOPSIGNAL SIGTERM$/m);
  assert.match(dockerfile, /^ENV NODE_ENV=production$/m, 'the image runs with env production without its config saying so');
  assert.match(dockerfile, /^HEALTHCHECK .*\n?.*CMD \["node"/m);
  assert.doesNotMatch(dockerfile, /curl|wget/);
  assert.match(dockerfile, /^FROM node:24-slim AS build$/m);
  assert.match(dockerfile, /npm ci --omit=dev/);
  const ignore = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
  for (const entry of ['node_modules', 'dist', '.git']) assert.ok(ignore.includes(entry), `.dockerignore lists ${entry}`);
});

test('the image installs pg and @redis/client, the optional peers deploy/ uses, at the versions of the lock', async () => {
  // the deps stage's RUN instructions, run as the build runs them: on package.json and package-lock.json alone
  const stage = dockerfile.slice(dockerfile.indexOf(' AS deps\n'), dockerfile.indexOf('\nFROM ', dockerfile.indexOf(' AS deps\n')));
  const runs = stage
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.startsWith('RUN '))
    .map((l) => l.slice('RUN '.length));
  assert.ok(runs.length > 0, 'the deps stage runs npm');
  const deps = mkdtempSync(join(tmpdir(), 'flotilla-image-deps-'));
  try {
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(deps, file));
    for (const command of runs) await run(deps, 'sh', ['-c', command], { env: { npm_config_prefer_offline: 'true' } });
    const lock = JSON.parse(readFileSync(join(deps, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
    for (const name of ['pg', '@redis/client']) {
      const installed = JSON.parse(readFileSync(join(deps, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
      assert.equal(installed.version, lock.packages[`node_modules/${name}`]!.version, `${name} as the lock records it`);
    }
    assert.equal(
      readFileSync(join(deps, 'package.json'), 'utf8'),
      readFileSync(join(root, 'package.json'), 'utf8'),
      'package.json as it was',
    );
    assert.ok(!existsSync(join(deps, 'node_modules/typescript')), 'no development dependency');
  } finally {
    rmSync(deps, { recursive: true, force: true });
  }
});
