import { type ChildProcess, spawn } from 'node:child_process';
import type { TestContext } from 'node:test';
import { CLI } from './cluster.ts';

/**
 * A running `flotilla dev --config app.yaml` in `dir`, its process group
 * SIGKILLed after the test: its output as text, awaitable by pattern.
 *
 * @example
 * const dev = new Dev(t, dir); await dev.untilCount(/reload: done/, 1, 'a reload');
 */
export class Dev {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters = new Set<() => void>();

  /** `env`: variables added to this process's own for `flotilla dev` (the project's `${VAR}`s). */
  constructor(t: TestContext, dir: string, env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, ['--conditions=source', CLI, 'dev', '--config', 'app.yaml'], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    const pid = this.child.pid;
    if (pid === undefined) throw new Error('could not spawn flotilla dev');
    t.after(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      for (const waiter of [...this.#waiters]) waiter();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      for (const waiter of [...this.#waiters]) waiter();
    });
  }

  /** Complete lines of stdout so far. */
  get lines(): string[] {
    return this.stdout.split('\n').slice(0, -1);
  }

  /** Resolves once `check` (run on every output) returns something; rejects after `timeoutMs` or when the process exits first. */
  until<T>(check: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        settle();
      };
      const waiter = () => {
        const value = check();
        if (value !== undefined) done(() => resolve(value));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${what}${this.tail()}`))), timeoutMs);
      this.#waiters.add(waiter);
      void this.exited.then(() => {
        if (this.#waiters.has(waiter)) done(() => reject(new Error(`flotilla dev exited before ${what}${this.tail()}`)));
      });
    });
  }

  /** Resolves once at least `count` stdout lines match `pattern`. */
  untilCount(pattern: RegExp, count: number, what: string, timeoutMs?: number): Promise<string[]> {
    return this.until(
      () => {
        const matching = this.lines.filter((line) => pattern.test(line));
        return matching.length >= count ? matching : undefined;
      },
      `${count} × ${what}`,
      timeoutMs,
    );
  }

  tail(): string {
    return `\n--- stdout (end):\n${this.stdout.slice(-4000)}\n--- stderr (end):\n${this.stderr.slice(-2000)}`;
  }
}
