import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, createReadStream, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { stringify } from 'yaml';

/**
 * One pino line of a cluster's stdout, with `at`: its `time` in ms since the
 * epoch. A line that is not a JSON object is kept as `{ raw }`.
 */
export type LogLine = Record<string, unknown> & { msg?: string; pid?: number; at: number };
export type Predicate = (line: LogLine) => boolean;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** When the primary exited, in ms since the epoch (comparable with `Date.now()`, sub-millisecond). */
  at: number;
}

/** How to run `flotilla start`. */
export interface Launch {
  /** The CLI: `src/cli/main.ts`, or its compiled `main.js`. */
  cli: string;
  /** Node flags before the CLI, e.g. `--conditions=source`. */
  execArgv?: readonly string[] | undefined;
  configFile: string;
  /** Extra environment of the primary (and so of its workers). */
  env?: Record<string, string> | undefined;
  /** The node binary (default: this process's); the workers are forked with the same one. */
  execPath?: string | undefined;
  /**
   * Stdout is a named pipe (FIFO), as in a container, instead of the socket
   * pair node:child_process gives a child: writes beyond PIPE_BUF to it may
   * be split.
   */
  stdoutFifo?: boolean | undefined;
}

/** Process groups still possibly alive: SIGKILLed when this process exits, whatever happened. */
const groups = new Set<number>();
process.once('exit', killAllClusters);

/** SIGKILLs every cluster still possibly alive (their whole process groups). */
export function killAllClusters(): void {
  for (const pgid of groups) killGroup(pgid);
  groups.clear();
}

/**
 * What every cluster started here has: 2 workers, and the metrics endpoint, on
 * 127.0.0.1 with OS-chosen ports; info-level logs, which `ready()` and the
 * waits read.
 */
const LOCAL = {
  host: '127.0.0.1',
  port: 0,
  workers: 2,
  logging: { level: 'info' },
  metrics: { host: '127.0.0.1', port: 0 },
};

/** The YAML of a cluster config: `base` merged (deeply) over the local defaults above, then `overrides` over that. */
export function configYaml(base: Record<string, unknown>, overrides: Record<string, unknown>): string {
  return stringify(merge(merge(LOCAL, base), overrides));
}

/**
 * A running `flotilla start` in its own process group: its stdout as parsed
 * lines, awaitable by predicate; the tail of its stderr; its exit.
 */
export class ClusterProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: LogLine[] = [];
  /** The last 20 000 characters of the primary's (and workers') stderr. */
  stderr = '';
  readonly exited: Promise<Exit>;
  /** Set by `ready()`. */
  appPort = 0;
  metricsPort = 0;
  /** Worker pid by slot, as first seen listening; set by `ready()`. */
  readonly workers = new Map<number, number>();
  /** The tree's stdout as this process reads it (the FIFO's read end with `stdoutFifo`). */
  readonly output: Readable | null;
  readonly #listeners = new Set<() => void>();
  readonly #stdoutClosed: Promise<void>;

  constructor(launch: Launch) {
    const fifo = launch.stdoutFifo === true ? openFifo() : undefined;
    try {
      this.child = spawn(
        launch.execPath ?? process.execPath,
        [...(launch.execArgv ?? []), launch.cli, 'start', '--config', launch.configFile],
        {
          detached: true,
          stdio: ['ignore', fifo?.writeFd ?? 'pipe', 'pipe'],
          env: { ...process.env, ...launch.env },
        },
      );
    } finally {
      // the tree holds the write end now: the reader sees the end once every process of it is gone
      if (fifo !== undefined) closeSync(fifo.writeFd);
    }
    if (this.child.pid === undefined) throw new Error('could not spawn the flotilla CLI');
    const stdout: Readable | null = fifo?.reader ?? this.child.stdout;
    this.output = stdout;
    this.pid = this.child.pid;
    groups.add(this.pid);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal, at: performance.timeOrigin + performance.now() }));
    });
    let buffered = '';
    this.#stdoutClosed = new Promise((resolve) => stdout?.once('close', resolve));
    stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        this.onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
  }

  /** The first line, already seen or yet to come, that matches; rejects on timeout or when the cluster's output ends first. */
  waitFor(predicate: Predicate, what: string, timeoutMs = 10_000): Promise<LogLine> {
    return this.#until(() => this.lines.find(predicate), what, timeoutMs);
  }

  /** Resolves with the matching lines once there are at least `count`. */
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

  /**
   * Waits until the metrics endpoint and `workers` worker slots are up (as the
   * primary counts them, each wait at most `timeoutMs`), and sets `appPort`,
   * `metricsPort` and `workers`.
   */
  async ready(workers = 2, timeoutMs = 10_000): Promise<this> {
    const metrics = await this.waitFor(byMsg('metrics endpoint listening'), 'the metrics endpoint', timeoutMs);
    const up = await this.waitForCount(byMsg('worker listening'), workers, 'worker listening', timeoutMs);
    for (const line of up) this.workers.set(line['slot'] as number, line['workerPid'] as number);
    this.metricsPort = metrics['port'] as number;
    const address = up[0]?.['address'] as { port: number } | undefined;
    if (address === undefined) throw new Error(`no listening address in the worker lines${this.tail()}`);
    this.appPort = address.port;
    return this;
  }

  /** Resolves once every process of the tree has closed its stdout: no line can come any more. */
  outputEnded(): Promise<void> {
    return this.#stdoutClosed;
  }

  /** Sends a signal to the primary only (as a container runtime does). */
  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  /** Sends a signal to the whole process group, as a terminal's Ctrl-C does. */
  signalGroup(signal: NodeJS.Signals): void {
    process.kill(-this.pid, signal);
  }

  /** The primary's exit, rejecting if it takes longer than `timeoutMs`. */
  async exit(timeoutMs: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the primary did not exit within ${timeoutMs} ms${this.tail()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILLs the whole process group (primary and workers); harmless when it is already gone. */
  kill(): void {
    killGroup(this.pid);
    groups.delete(this.pid);
  }

  /** The last `n` stdout lines and the end of stderr, for error messages. */
  tail(n = 15): string {
    const last = this.lines.slice(-n).map((l) => JSON.stringify(l));
    return `\n--- last stdout lines:\n${last.join('\n')}\n--- stderr:\n${this.stderr.slice(-2000)}`;
  }

  /** Takes one line of stdout: kept parsed in `lines`, and checked by the waits. A subclass may divert lines instead. */
  protected onLine(text: string): void {
    this.lines.push(parseLine(text));
    for (const listener of [...this.#listeners]) listener();
  }

  /** Resolves with `check()`'s first defined value, checked now and after every line. */
  #until<T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.#listeners.delete(onLine);
        settle();
      };
      const onLine = () => {
        const value = check();
        if (value !== undefined) done(() => resolve(value));
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${this.tail()}`))),
        timeoutMs,
      );
      this.#listeners.add(onLine);
      // once every process of the tree has closed its stdout, no line can come any more
      void this.#stdoutClosed.then(() => {
        if (this.#listeners.has(onLine)) done(() => reject(new Error(`the cluster's stdout closed before ${what}${this.tail()}`)));
      });
    });
  }
}

/** Matches lines whose `msg` is `msg` (and, optionally, more fields). */
export function byMsg(msg: string, fields: Record<string, unknown> = {}): Predicate {
  return (line) => line.msg === msg && Object.entries(fields).every(([k, v]) => line[k] === v);
}

/** One line of stdout as a `LogLine`. */
export function parseLine(text: string): LogLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { raw: text, at: Number.NaN };
  }
  if (!isPlain(parsed)) return { raw: text, at: Number.NaN };
  return Object.assign(parsed, { at: typeof parsed['time'] === 'string' ? Date.parse(parsed['time']) : Number.NaN });
}

/**
 * A new named pipe, already unlinked: its read end as a stream and its write
 * end for a child. The stream reads at most 4 KiB at a time, a page of the
 * pipe, as a busy log collector does: writers blocked on a full pipe then
 * take turns page by page, which is where a write longer than PIPE_BUF gets
 * split by another writer's.
 */
export function openFifo(): { reader: Readable; writeFd: number } {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-fifo-'));
  try {
    const path = join(dir, 'stdout');
    execFileSync('mkfifo', [path]);
    // opening one end waits for the other: the read end first without waiting (non-blocking), then the write end,
    // then a blocking read end for the stream's reads, which can open at once now
    const probeFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeFd = openSync(path, constants.O_WRONLY);
    const readFd = openSync(path, constants.O_RDONLY);
    closeSync(probeFd);
    return { reader: createReadStream('', { fd: readFd, highWaterMark: 4096 }), writeFd };
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
