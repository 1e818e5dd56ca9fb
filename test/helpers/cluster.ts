import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

/** The `flotilla` CLI, run from source. */
export const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** The service every cluster test starts (see its header for what it can do). */
export const FIXTURE_SERVICE = fileURLToPath(new URL('../fixtures/cluster/service.ts', import.meta.url));

/** One parsed pino line of the cluster's stdout (a line that is not JSON is kept as `{ raw }`). */
export type LogLine = Record<string, unknown> & { msg?: string; pid?: number };
export type Predicate = (line: LogLine) => boolean;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** `Date.now()` when the primary exited. */
  at: number;
}

export interface ClusterOptions {
  /** Merged (deeply) over the base config: 2 workers on 127.0.0.1, OS-chosen ports, the fixture service. */
  config?: Record<string, unknown>;
  /** Extra environment of the primary (and so of its workers), e.g. `FIXTURE_HANG_HOOK: '1'`. */
  env?: Record<string, string>;
}

export interface Ready {
  appPort: number;
  metricsPort: number;
  /** Worker pid by slot, once the primary counts every slot as up. */
  workers: Map<number, number>;
}

const BASE_CONFIG = {
  serviceName: 'fixture',
  host: '127.0.0.1',
  port: 0,
  workers: 2,
  logging: { level: 'info' },
  metrics: { host: '127.0.0.1', port: 0 },
  cluster: { startupTimeoutMs: 10_000, backoffInitialMs: 50, backoffMaxMs: 500, crashLoopFailures: 4, crashLoopWindowMs: 10_000 },
};

/** Process groups still possibly alive: killed when the test process exits, whatever happened. */
const groups = new Set<number>();
process.once('exit', () => {
  for (const pgid of groups) killGroup(pgid);
});

/** Writes `files` (name → content) into a fresh temporary directory removed after the test. */
export function tempFiles(t: TestContext, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-it-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

/** The YAML of a cluster config: the base, `overrides` merged over it, `service` pointing at the fixture. */
export function clusterYaml(overrides: Record<string, unknown> = {}): string {
  return stringify(merge({ ...BASE_CONFIG, service: FIXTURE_SERVICE }, overrides));
}

/**
 * Starts `flotilla start` on a per-test YAML file, in its own process group.
 * The whole tree is SIGKILLed in the test's `after` hook (and when the test
 * process exits), so a failing test leaves no process behind.
 */
export function startCluster(t: TestContext, options: ClusterOptions = {}): ClusterProcess {
  const dir = tempFiles(t, { 'app.yaml': clusterYaml(options.config) });
  const cluster = new ClusterProcess(join(dir, 'app.yaml'), options.env ?? {});
  t.after(() => cluster.kill());
  return cluster;
}

/**
 * A running `flotilla start`: its stdout as parsed lines, awaitable by
 * predicate; its stderr as text; its exit.
 */
export class ClusterProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: LogLine[] = [];
  stderr = '';
  readonly exited: Promise<Exit>;
  readonly #listeners = new Set<() => void>();
  readonly #stdoutClosed: Promise<void>;

  constructor(configFile: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, [CLI, 'start', '--config', configFile], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    if (this.child.pid === undefined) throw new Error('could not spawn the flotilla CLI');
    this.pid = this.child.pid;
    groups.add(this.pid);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        resolve({ code, signal, at: Date.now() });
      });
    });
    let buffered = '';
    this.#stdoutClosed = new Promise((resolve) => this.child.stdout?.once('close', resolve));
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        this.#push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
  }

  /** The first line, already seen or yet to come, that matches; rejects on timeout or when the primary exits first. */
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

  /** Waits until the metrics endpoint and every worker slot are up (as the primary counts them). */
  async ready(workers = 2): Promise<Ready> {
    const metrics = await this.waitFor(byMsg('metrics endpoint listening'), 'the metrics endpoint');
    const up = await this.waitForCount(byMsg('worker listening'), workers, 'worker listening');
    const slots = new Map<number, number>();
    for (const line of up) slots.set(line['slot'] as number, line['workerPid'] as number);
    const address = up[0]?.['address'] as { port: number };
    return { appPort: address.port, metricsPort: metrics['port'] as number, workers: slots };
  }

  /** Sends a signal to the primary only. */
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
      timer = setTimeout(() => reject(new Error(`the primary did not exit within ${timeoutMs} ms${this.#tail()}`)), timeoutMs);
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

  #push(text: string): void {
    try {
      this.lines.push(JSON.parse(text) as LogLine);
    } catch {
      this.lines.push({ raw: text });
    }
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
        () => done(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${this.#tail()}`))),
        timeoutMs,
      );
      this.#listeners.add(onLine);
      // once every process of the tree has closed its stdout, no line can come any more
      void this.#stdoutClosed.then(() => {
        if (this.#listeners.has(onLine)) done(() => reject(new Error(`the cluster's stdout closed before ${what}${this.#tail()}`)));
      });
    });
  }

  #tail(): string {
    const last = this.lines.slice(-15).map((l) => JSON.stringify(l));
    return `\n--- last stdout lines:\n${last.join('\n')}\n--- stderr:\n${this.stderr.slice(-2000)}`;
  }
}

/** Matches lines whose `msg` is `msg` (and, optionally, more fields). */
export function byMsg(msg: string, fields: Record<string, unknown> = {}): Predicate {
  return (line) => line.msg === msg && Object.entries(fields).every(([k, v]) => line[k] === v);
}

export interface Reply {
  status: number;
  body: string;
}

/** One GET on its own TCP connection (`Connection: close`), so that node:cluster hands it to the next worker. */
export function get(port: number, path: string, timeoutMs = 5_000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `GET /who` → the pid of the worker that answered. */
export async function who(port: number): Promise<number> {
  const reply = await get(port, '/who');
  if (reply.status !== 200) throw new Error(`GET /who answered ${reply.status}: ${reply.body}`);
  return (JSON.parse(reply.body) as { pid: number }).pid;
}

/** The value of one sample of a Prometheus text exposition, e.g. `sample(text, 'up{job="x"}')`; undefined when absent. */
export function sample(exposition: string, series: string): number | undefined {
  for (const line of exposition.split('\n')) {
    if (line.startsWith(`${series} `))
      return Number(
        line
          .slice(series.length + 1)
          .trim()
          .split(' ')[0],
      );
  }
  return undefined;
}

/**
 * Whether a process is still running. A zombie (exited, not yet reaped by
 * whoever inherited it) counts as gone: it runs no code and holds no socket.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves once none of `pids` is alive; rejects after `timeoutMs` naming the survivors. */
export async function allGone(pids: readonly number[], timeoutMs = 2_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0) return;
    if (Date.now() > until) throw new Error(`processes still alive after ${timeoutMs} ms: ${alive.join(', ')}`);
    await new Promise((r) => setTimeout(r, 25));
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
