import { execFile, spawn } from 'node:child_process';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { CLI } from './cluster.ts';

/** What a one-shot CLI command did. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of `runCli`: the working directory, and the environment (replacing this process's when given). */
export interface CliRunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/**
 * Runs the `flotilla` CLI from source to its end (`config`, `openapi`, `init`…).
 *
 * @example
 * const run = await runCli(['config'], { cwd: dir }); // run.code === 0
 */
export async function runCli(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 20_000,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * `flotilla <args>` to its exit, in a process group of its own that is SIGKILLed after the test
 * whatever happened (a `start` that did start leaves no worker behind); rejects after `timeoutMs`.
 * `env` replaces this process's environment; `execArgv` are the CLI's Node flags; `cli` its main
 * module, when not this checkout's (a copy of it installed otherwise).
 *
 * @example
 * const run = await runCliInGroup(t, ['start', '--config', 'app.yaml'], { cwd: dir, env }); // run.code === 2
 */
export function runCliInGroup(
  t: TestContext,
  args: readonly string[],
  options: CliRunOptions & { execArgv?: readonly string[]; cli?: string } = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, [...(options.execArgv ?? []), options.cli ?? CLI, ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`flotilla ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`)),
      timeoutMs,
    );
    child.once('error', reject);
    // 'close': the streams are read to their end
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}
