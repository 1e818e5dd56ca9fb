import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { get } from '../../tools/fresh-get.ts';

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
const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline'];
const INSTALL_TIMEOUT_MS = 300_000;

const work = mkdtempSync(join(tmpdir(), 'flotilla-install-'));
after(() => rmSync(work, { recursive: true, force: true }));

/**
 * The environment of every command: this Node first on PATH (npm and the
 * `flotilla` bin run on it), no `node_modules/.bin` of the repository (a tool
 * the project lacks must not be found there), no variables of an npm script
 * that runs this test, nor of its test runner (context, coverage, options).
 */
const ENV: NodeJS.ProcessEnv = (() => {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_|INIT_CWD$|NODE_OPTIONS$|NODE_TEST_CONTEXT$|NODE_V8_COVERAGE$)/i.test(key)) env[key] = value;
  }
  const path = (process.env['PATH'] ?? '').split(delimiter).filter((p) => p !== '' && !p.endsWith(`node_modules${sep}.bin`));
  env['PATH'] = [dirname(process.execPath), ...path].join(delimiter);
  return env;
})();

interface Run {
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects, with its output, when it fails. */
async function run(
  cwd: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeout?: number } = {},
): Promise<Run> {
  try {
    return await promisify(execFile)(command, args, {
      cwd,
      env: { ...ENV, ...options.env },
      encoding: 'utf8',
      timeout: options.timeout ?? INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const failed = error as Error & Partial<Run>;
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
  }
}

/** The value of `fn()`, computed once, when first asked for. */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= fn();
    return value;
  };
}

/** The repository as a fresh clone would have it, committed, so that git and directory installs see this work tree. */
const source = once(async () => {
  const dir = join(work, 'flotilla');
  const { stdout } = await run(ROOT, 'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  for (const file of stdout.split('\0')) {
    // regular files only: the repository has no symlinks, and a deleted file is listed while still in the index
    if (file === '' || !lstatSync(join(ROOT, file), { throwIfNoEntry: false })?.isFile()) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  const git = ['-c', 'user.name=flotilla', '-c', 'user.email=flotilla@example.invalid', '-c', 'commit.gpgsign=false'];
  await run(dir, 'git', ['-c', 'init.defaultBranch=main', 'init', '-q']);
  await run(dir, 'git', ['add', '-A']);
  await run(dir, 'git', [...git, 'commit', '-q', '-m', 'snapshot']);
  return dir;
});

/** docs/guides/first-service.md: "a clone in which `npm install` was run (it builds dist/)". */
const clone = once(async () => {
  const dir = join(work, 'clone');
  await run(work, 'git', ['clone', '-q', await source(), dir]);
  await run(dir, 'npm', ['install', ...NPM_FLAGS]);
  return dir;
});

/** docs/guides/first-service.md: "from `npm pack` in a clone": the one above (`pack` runs `prepare`, which a clone without its devDependencies fails). */
const tarball = once(async () => {
  const dir = await clone();
  const { stdout } = await run(dir, 'npm', ['pack', '--json', '--pack-destination', work]);
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  return join(work, packed!.filename);
});

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

interface Started {
  child: ChildProcess;
  /** The port of the service, from the first `worker listening` line. */
  port: Promise<number>;
  exit: Promise<[number | null, NodeJS.Signals | null]>;
  /** Everything it wrote to stdout so far. */
  stdout(): string;
  /** The ends of its stdout and stderr, for messages. */
  output(): string;
}

/** `npm start` in its own process group, on 127.0.0.1 with ports the OS picks; the group is SIGKILLed after the test. */
function startService(t: TestContext, dir: string): Started {
  const child = spawn('npm', ['start'], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...ENV, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', WORKERS: '2', LOG_LEVEL: 'info' },
  });
  t.after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  });
  let stdout = '';
  let stderr = '';
  const exit = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (code, signal) => resolve([code, signal])),
  );
  const output = () => `\n--- stdout:\n${stdout.slice(-4000)}\n--- stderr:\n${stderr.slice(-4000)}`;
  const port = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no worker listening within 30 s${output()}`)), 30_000);
    exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`npm start exited before serving${output()}`));
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const listening = logLines(stdout).find((line) => line['msg'] === 'worker listening');
      const address = listening?.['address'] as { port: number } | undefined;
      if (address === undefined) return;
      clearTimeout(timer);
      resolve(address.port);
    });
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { child, port, exit, stdout: () => stdout, output };
}

/** The complete JSON log lines of an output (npm's own lines are not JSON). */
function logLines(output: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of output.split('\n').slice(0, -1)) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }
  return lines;
}

/** Whether a process of the group is still running. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
