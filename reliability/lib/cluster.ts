import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { now, within } from './clock.ts';
import { isAlive, whenGone } from './proc.ts';
import { type Runtime, sourceRuntime } from './runtime.ts';

/** One pino line of the cluster's stdout, with `at`: its `time` as ms since the epoch. */
export type LogLine = Record<string, unknown> & { msg?: string; pid?: number; at: number };
export type Predicate = (line: LogLine) => boolean;

export interface ClusterOptions {
  /** Compiled or from source; default from source. */
  runtime?: Runtime;
  /** Merged (deeply) over the base: 2 workers on 127.0.0.1, OS-chosen ports, the fixture service, framework defaults otherwise. */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Keep the per-request log lines (`request completed`), to find a request id in them; off for long runs. */
  keepRequestLines?: boolean;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

const BASE = {
  serviceName: 'reliability',
  host: '127.0.0.1',
  port: 0,
  workers: 2,
  logging: { level: 'info' },
  metrics: { host: '127.0.0.1', port: 0 },
};

/** Process groups possibly alive, and their config directories: SIGKILLed and removed when the orchestrator exits, whatever happened. */
const groups = new Set<number>();
const dirs = new Set<string>();
process.once('exit', killAllClusters);

/** SIGKILLs every cluster still possibly alive (their process groups). */
export function killAllClusters(): void {
  for (const pgid of groups) killGroup(pgid);
  groups.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

/**
 * A running `flotilla start` in its own process group, on a generated YAML
 * file: its stdout as parsed pino lines (awaitable by predicate), its exit.
 */
export class Cluster {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: LogLine[] = [];
  readonly exited: Promise<Exit>;
  stderr = '';
  appPort = 0;
  metricsPort = 0;
  /** Worker pid by slot, as first seen listening. */
  readonly workers = new Map<number, number>();
  readonly #dir: string;
  readonly #keepRequests: boolean;
  readonly #requestLines: string[] = [];
  readonly #listeners = new Set<() => void>();
  #closed = false;

  constructor(options: ClusterOptions = {}) {
    this.#dir = mkdtempSync(join(tmpdir(), 'flotilla-reliability-'));
    dirs.add(this.#dir);
    const file = join(this.#dir, 'app.yaml');
    const runtime = options.runtime ?? sourceRuntime();
    writeFileSync(file, stringify(merge({ ...BASE, service: runtime.service }, options.config ?? {})));
    this.#keepRequests = options.keepRequestLines ?? false;
    this.child = spawn(process.execPath, [...runtime.execArgv, runtime.cli, 'start', '--config', file], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    });
    if (this.child.pid === undefined) throw new Error('could not spawn the flotilla CLI');
    this.pid = this.child.pid;
    groups.add(this.pid);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal, at: now() })));
    let buffered = '';
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl = buffered.indexOf('\n');
      while (nl !== -1) {
        this.#push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
      }
    });
    this.child.stdout?.once('close', () => {
      this.#closed = true;
      this.#notify();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
  }

  /** Waits until the metrics endpoint and `workers` workers are up, as the primary counts them. */
  async ready(workers = 2, timeoutMs = 20_000): Promise<this> {
    const metrics = await this.waitFor(byMsg('metrics endpoint listening'), 'the metrics endpoint', timeoutMs);
    const up = await this.waitForCount(byMsg('worker listening'), workers, 'workers listening', timeoutMs);
    for (const line of up) this.workers.set(line['slot'] as number, line['workerPid'] as number);
    this.metricsPort = metrics['port'] as number;
    const address = up[0]?.['address'] as { port: number } | undefined;
    if (address === undefined) throw new Error(`no listening address in the worker lines${this.tail()}`);
    this.appPort = address.port;
    return this;
  }

  waitFor(predicate: Predicate, what: string, timeoutMs = 10_000): Promise<LogLine> {
    return this.#until(() => this.lines.find(predicate), what, timeoutMs);
  }

  waitForCount(predicate: Predicate, count: number, what: string, timeoutMs = 10_000): Promise<LogLine[]> {
    return this.#until(
      () => {
        const matching = this.lines.filter(predicate);
        return matching.length >= count ? matching : undefined;
      },
      `${count} × ${what}`,
      timeoutMs,
    );
  }

  /** The per-request log lines kept so far (`keepRequestLines`), parsed. */
  requestLines(): LogLine[] {
    return this.#requestLines.map(parse);
  }

  /** Sends a signal to the primary only (as a container runtime does). */
  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  /** Every pid of the tree seen so far: the primary and every worker that ever listened or was forked. */
  pids(): number[] {
    const workers = this.lines.flatMap((l) => (typeof l['workerPid'] === 'number' ? [l['workerPid'] as number] : []));
    return [...new Set([this.pid, ...workers, ...this.workers.values()])];
  }

  /** SIGTERM, then the primary's exit within `timeoutMs` (SIGKILL of the group after that). */
  async stop(timeoutMs = 15_000): Promise<Exit> {
    if (isAlive(this.pid)) this.signal('SIGTERM');
    const exit = await within(this.exited, timeoutMs);
    if (exit === undefined) {
      this.kill();
      return this.exited;
    }
    await whenGone(this.pids(), 2_000);
    return exit;
  }

  /** SIGKILLs the whole group and removes the temporary directory; harmless when already gone. */
  kill(): void {
    killGroup(this.pid);
    groups.delete(this.pid);
  }

  dispose(): void {
    this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
    dirs.delete(this.#dir);
  }

  /** The last lines, for error messages. */
  tail(n = 15): string {
    const last = this.lines.slice(-n).map((l) => JSON.stringify(l));
    return `\n--- last stdout lines:\n${last.join('\n')}\n--- stderr:\n${this.stderr.slice(-2000)}`;
  }

  #push(text: string): void {
    // per-request lines are most of the output under load: keep them raw (or drop them) without parsing
    if (text.includes('"msg":"request completed"')) {
      if (this.#keepRequests) this.#requestLines.push(text);
      return;
    }
    this.lines.push(parse(text));
    this.#notify();
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #until<T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    const first = check();
    if (first !== undefined) return Promise.resolve(first);
    return new Promise((resolve, reject) => {
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
        settle();
      };
      const listener = () => {
        const value = check();
        if (value !== undefined) done(() => resolve(value));
        else if (this.#closed) done(() => reject(new Error(`the cluster's output ended before ${what}${this.tail()}`)));
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${this.tail()}`))),
        timeoutMs,
      );
      this.#listeners.add(listener);
    });
  }
}

export function byMsg(msg: string, fields: Record<string, unknown> = {}): Predicate {
  return (line) => line.msg === msg && Object.entries(fields).every(([k, v]) => line[k] === v);
}

function parse(text: string): LogLine {
  try {
    const line = JSON.parse(text) as LogLine;
    line.at = typeof line['time'] === 'string' ? Date.parse(line['time']) : Number.NaN;
    return line;
  } catch {
    return { raw: text, at: Number.NaN };
  }
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlain(current) && isPlain(value) ? merge(current, value) : value;
  }
  return out;
}

function isPlain(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
