import { execFile } from 'node:child_process';
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
