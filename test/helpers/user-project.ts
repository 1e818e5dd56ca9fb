import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync } from 'node:fs';
import { delimiter, dirname, join, sep } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * A user's project against the package as a user gets it: the repository as a fresh clone has it,
 * cloned, installed (`prepare` builds dist/) and packed. Shared by the install test
 * (test/install/install.test.ts) and the tutorial's (test/docs/tutorial.test.ts).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** npm's flags for every install: the npm cache first. */
export const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline'];
const INSTALL_TIMEOUT_MS = 300_000;

/**
 * The environment of every command: this Node first on PATH (npm and the
 * `flotilla` bin run on it), no `node_modules/.bin` of the repository (a tool
 * the project lacks must not be found there), no variables of an npm script
 * that runs this test, nor of its test runner (context, coverage, options).
 */
export const ENV: NodeJS.ProcessEnv = (() => {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_|INIT_CWD$|NODE_OPTIONS$|NODE_TEST_CONTEXT$|NODE_V8_COVERAGE$)/i.test(key)) env[key] = value;
  }
  const path = (process.env['PATH'] ?? '').split(delimiter).filter((p) => p !== '' && !p.endsWith(`node_modules${sep}.bin`));
  env['PATH'] = [dirname(process.execPath), ...path].join(delimiter);
  return env;
})();

export interface Run {
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects, with its output, when it fails. */
export async function run(
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
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= fn();
    return value;
  };
}

/** The package's three forms, each made once, when first asked for, in `work`. */
export interface PackageSources {
  /** The repository as a fresh clone would have it, committed. */
  source(): Promise<string>;
  /** A clone of it in which `npm install` ran. */
  clone(): Promise<string>;
  /** The `npm pack` of that clone. */
  tarball(): Promise<string>;
}

export function packageSources(work: string): PackageSources {
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
  return { source, clone, tarball };
}

export interface Started {
  child: ChildProcess;
  /** The port of the service, from the first `worker listening` line. */
  port: Promise<number>;
  exit: Promise<[number | null, NodeJS.Signals | null]>;
  /** Everything it wrote to stdout so far. */
  stdout(): string;
  /** The ends of its stdout and stderr, for messages. */
  output(): string;
}

/**
 * `npm start` in its own process group, on 127.0.0.1 with ports the OS picks (the config's
 * `${PORT}`, `${METRICS_PORT}`, `${HOST}`, `${WORKERS}` as `flotilla init` writes them), with `env`
 * added; the group is SIGKILLed after the test.
 */
export function startService(t: TestContext, dir: string, env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn('npm', ['start'], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...ENV, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', WORKERS: '2', LOG_LEVEL: 'info', ...env },
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
export function logLines(output: string): Record<string, unknown>[] {
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
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
