import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'node:test';
import { stringify } from 'yaml';

/**
 * A throwaway real Prometheus server for a test: its own temporary TSDB and
 * config, scraping one target every second, on a port the OS chose (it
 * listens on port 0 and we read the address it logs). Stopped (SIGTERM, then
 * SIGKILL) and its directory removed in the test's `after` hook, and
 * SIGKILLed when this process exits whatever happened.
 */

/** Debian's package "prometheus" installs the server as /usr/bin/prometheus (and promtool beside it). */
export const PROMETHEUS_PACKAGE = 'prometheus';

export interface PrometheusOptions {
  /** `host:port` of the one scrape target. */
  target: string;
  /** Default `/metrics`. */
  metricsPath?: string;
  /** Scrape interval and timeout, in seconds; default 1. */
  scrapeIntervalSeconds?: number;
}

/** One series of an instant vector: its labels and `[unix seconds, value as text]`. */
export interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** One series of a range vector or of `query_range`: its labels and `[unix seconds, value as text]` points. */
export interface MatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

type QueryData = { resultType: 'vector'; result: VectorSample[] } | { resultType: 'matrix'; result: MatrixSeries[] };

/** Children still possibly alive: SIGKILLed when this process exits. */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** The `prometheus` executable on PATH, or undefined. */
export function prometheusBinary(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'prometheus');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Whether the test can run Prometheus. When the binary is missing, skips the
 * test (returning false: the test should return) outside CI, and throws in CI
 * (`process.env.CI` set), where it must be installed. Call it before starting
 * anything costly.
 */
export function needPrometheus(t: TestContext): boolean {
  if (prometheusBinary() !== undefined) return true;
  const what = `the prometheus server binary is not on PATH (Debian package "${PROMETHEUS_PACKAGE}")`;
  if (process.env['CI'] !== undefined) throw new Error(`${what}: it is required in CI, where .ci/run installs it`);
  t.skip(`${what}; CI installs it`);
  return false;
}

/**
 * Starts Prometheus and waits until `/-/ready` answers 200; stopped in the
 * test's `after` hook. Undefined (and the test skipped) when the binary is
 * missing outside CI, as {@link needPrometheus} decides.
 */
export async function startPrometheus(t: TestContext, options: PrometheusOptions): Promise<Prometheus | undefined> {
  if (!needPrometheus(t)) return undefined;
  const prometheus = new Prometheus(prometheusBinary() ?? 'prometheus', options);
  t.after(() => prometheus.stop());
  await prometheus.ready();
  return prometheus;
}

export class Prometheus {
  readonly child: ChildProcess;
  readonly dir: string;
  /** `http://127.0.0.1:<port>`, once `ready()` resolved. */
  url = '';
  /** The last 20 000 characters of its log (stderr). */
  log = '';
  readonly #exited: Promise<void>;
  #stopped: Promise<void> | undefined;

  constructor(binary: string, options: PrometheusOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'flotilla-prometheus-'));
    const interval = `${options.scrapeIntervalSeconds ?? 1}s`;
    const config = {
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      scrape_configs: [
        { job_name: 'flotilla', metrics_path: options.metricsPath ?? '/metrics', static_configs: [{ targets: [options.target] }] },
      ],
    };
    writeFileSync(join(this.dir, 'prometheus.yml'), stringify(config));
    this.child = spawn(
      binary,
      [
        `--config.file=${join(this.dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(this.dir, 'data')}`,
        '--web.listen-address=127.0.0.1:0',
        '--log.level=info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(this.child);
    this.#exited = new Promise((resolve) => {
      this.child.once('exit', () => {
        children.delete(this.child);
        resolve();
      });
      // a spawn that fails (ENOENT, EACCES) emits 'error' and no 'exit'
      this.child.once('error', (error) => {
        this.log += `\nspawn failed: ${error.message}`;
        children.delete(this.child);
        resolve();
      });
    });
    const keep = (chunk: string) => {
      this.log = (this.log + chunk).slice(-20_000);
    };
    this.child.stdout?.setEncoding('utf8').on('data', keep);
    this.child.stderr?.setEncoding('utf8').on('data', keep);
  }

  /** Waits for the address it logs (`msg="Listening on" … address=127.0.0.1:N`), then for `/-/ready` to answer 200. */
  async ready(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    let exited = false;
    void this.#exited.then(() => {
      exited = true;
    });
    for (;;) {
      if (exited) throw new Error(`prometheus exited before it was ready${this.tail()}`);
      if (Date.now() > until) throw new Error(`prometheus was not ready within ${timeoutMs} ms${this.tail()}`);
      if (this.url === '') {
        const listening = /msg="?Listening on"?[^\n]*?\baddress=(\S+)/.exec(this.log);
        if (listening?.[1] !== undefined) this.url = `http://${listening[1].replace(/^"|"$/g, '')}`;
      }
      if (this.url !== '') {
        try {
          const res = await fetch(`${this.url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
          await res.arrayBuffer();
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** An instant query (`/api/v1/query`) at `time` (ms since the epoch; default: now). */
  async query(promql: string, time?: number): Promise<QueryData> {
    const params: Record<string, string> = { query: promql };
    if (time !== undefined) params['time'] = seconds(time);
    return this.#api('query', params);
  }

  /** A range query (`/api/v1/query_range`) from `start` to `end` (ms since the epoch), one point every `stepSeconds`. */
  async queryRange(promql: string, start: number, end: number, stepSeconds: number): Promise<MatrixSeries[]> {
    const data = await this.#api('query_range', { query: promql, start: seconds(start), end: seconds(end), step: String(stepSeconds) });
    if (data.resultType !== 'matrix') throw new Error(`query_range of ${promql} gave a ${data.resultType}`);
    return data.result;
  }

  /** The value of an instant query that yields at most one series (e.g. `sum(…)`); undefined when it yields none. */
  async scalar(promql: string, time?: number): Promise<number | undefined> {
    const data = await this.query(promql, time);
    if (data.resultType !== 'vector') throw new Error(`${promql} gave a ${data.resultType}, not a vector`);
    if (data.result.length > 1) throw new Error(`${promql} gave ${data.result.length} series: ${JSON.stringify(data.result)}`);
    const value = data.result[0]?.value[1];
    return value === undefined ? undefined : Number(value);
  }

  /** The raw samples of a range selector, e.g. `up[2m]`, at `time` (ms since the epoch; default: now). */
  async samples(selector: string, time?: number): Promise<MatrixSeries[]> {
    const data = await this.query(selector, time);
    if (data.resultType !== 'matrix') throw new Error(`${selector} gave a ${data.resultType}, not a matrix`);
    return data.result;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; then removes its directory. Idempotent. */
  stop(graceMs = 5_000): Promise<void> {
    this.#stopped ??= (async () => {
      if (children.has(this.child)) {
        this.child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), graceMs);
        });
        const outcome = await Promise.race([this.#exited, late]);
        clearTimeout(timer);
        if (outcome === 'late') {
          this.child.kill('SIGKILL');
          await this.#exited;
        }
      }
      rmSync(this.dir, { recursive: true, force: true });
    })();
    return this.#stopped;
  }

  /** The end of its log, for error messages. */
  tail(): string {
    return `\n--- prometheus log:\n${this.log.slice(-3_000)}`;
  }

  async #api(endpoint: 'query' | 'query_range', params: Record<string, string>): Promise<QueryData> {
    const res = await fetch(`${this.url}/api/v1/${endpoint}`, {
      method: 'POST',
      body: new URLSearchParams(params),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { status: string; data?: QueryData; error?: string; errorType?: string };
    if (body.status !== 'success' || body.data === undefined)
      throw new Error(`prometheus ${endpoint} ${JSON.stringify(params)} failed (${res.status}): ${body.errorType}: ${body.error}`);
    return body.data;
  }
}

/** ms since the epoch → the API's unix seconds, to the millisecond (sample timestamps are whole milliseconds). */
function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}
