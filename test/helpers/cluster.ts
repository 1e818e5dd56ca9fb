import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClusterProcess, configYaml } from '../../tools/cluster-process.ts';
import { get } from '../../tools/fresh-get.ts';
import { isAlive } from '../../tools/proc.ts';

export { byMsg } from '../../tools/cluster-process.ts';
/** One GET on its own TCP connection, so that node:cluster hands it to the next worker. */
export { get, type Reply } from '../../tools/fresh-get.ts';

/** The `flotilla` CLI, run from source. */
export const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** The service every cluster test starts (see its header for what it can do). */
export const FIXTURE_SERVICE = fileURLToPath(new URL('../fixtures/cluster/service.ts', import.meta.url));

export interface ClusterOptions {
  /** Merged (deeply) over the base config: 2 workers on 127.0.0.1, OS-chosen ports, the fixture service. */
  config?: Record<string, unknown>;
  /** Extra environment of the primary (and so of its workers), e.g. `FIXTURE_HANG_HOOK: '1'`. */
  env?: Record<string, string>;
  /** The node binary of the primary and its workers (default: this process's). */
  execPath?: string;
  /** Node flags of the primary (its workers inherit them), e.g. `--conditions=source` for a service importing `flotilla`. */
  execArgv?: readonly string[];
}

/** Over the local defaults of `configYaml`: supervision fast enough for tests. */
const BASE_CONFIG = {
  serviceName: 'fixture',
  cluster: { startupTimeoutMs: 10_000, backoffInitialMs: 50, backoffMaxMs: 500, crashLoopFailures: 4, crashLoopWindowMs: 10_000 },
};

/** Writes `files` (name → content) into a fresh temporary directory removed after the test. */
export function tempFiles(t: TestContext, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-it-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

/** The YAML of a cluster config: the base, `overrides` merged over it, `service` pointing at the fixture. */
export function clusterYaml(overrides: Record<string, unknown> = {}): string {
  return configYaml({ ...BASE_CONFIG, service: FIXTURE_SERVICE }, overrides);
}

/**
 * Starts `flotilla start` on a per-test YAML file, in its own process group.
 * The whole tree is SIGKILLed in the test's `after` hook (and when the test
 * process exits), so a failing test leaves no process behind.
 */
export function startCluster(t: TestContext, options: ClusterOptions = {}): ClusterProcess {
  const dir = tempFiles(t, { 'app.yaml': clusterYaml(options.config) });
  const cluster = new ClusterProcess({
    cli: CLI,
    configFile: join(dir, 'app.yaml'),
    env: options.env,
    execPath: options.execPath,
    execArgv: options.execArgv,
  });
  t.after(() => cluster.kill());
  return cluster;
}

/** `GET /who` → the pid of the worker that answered. */
export async function who(port: number): Promise<number> {
  const reply = await get(port, '/who');
  if (reply.status !== 200) throw new Error(`GET /who answered ${reply.status}: ${reply.body}`);
  return (JSON.parse(reply.body) as { pid: number }).pid;
}

/**
 * Asks, each time on a new connection, until every one of `pids` has answered: at least `min` times, at most 200.
 * With kernel balancing the kernel picks the worker that accepts, and a busy machine may hand a long run of
 * connections to one of them. Returns every answer, in order.
 */
export async function untilEachAnswered<T>(
  pids: Iterable<number>,
  ask: () => Promise<T>,
  pidOf: (answer: T) => number,
  min = 1,
): Promise<T[]> {
  const missing = new Set(pids);
  const answers: T[] = [];
  while (answers.length < 200 && (answers.length < min || missing.size > 0)) {
    const answer = await ask();
    missing.delete(pidOf(answer));
    answers.push(answer);
  }
  return answers;
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
 * Scrapes `GET /metrics` until `ready(text)` holds (workers push their snapshots every
 * `cluster.metricsIntervalMs`, so a count shows up within one interval); rejects after `timeoutMs`
 * with the last text.
 */
export async function scrapeUntil(port: number, ready: (text: string) => boolean, timeoutMs = 5_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await get(port, '/metrics');
    if (ready(body)) return body;
    if (Date.now() > until) throw new Error(`the scrape never met the condition; last one:\n${body}`);
    await new Promise((r) => setTimeout(r, 50));
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
