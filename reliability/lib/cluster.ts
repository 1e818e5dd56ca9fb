import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterProcess, configYaml, type Exit, type LogLine, parseLine } from '../../tools/cluster-process.ts';
import { isAlive } from '../../tools/proc.ts';
import { within } from './clock.ts';
import { whenGone } from './proc.ts';
import { type Runtime, sourceRuntime } from './runtime.ts';

export { byMsg, type Exit, killAllClusters } from '../../tools/cluster-process.ts';

export interface ClusterOptions {
  /** Compiled or from source; default from source. */
  runtime?: Runtime;
  /** Merged (deeply) over the base: 2 workers on 127.0.0.1, OS-chosen ports, the fixture service, framework defaults otherwise. */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Keep the per-request log lines (`request completed`), to find a request id in them; off for long runs. */
  keepRequestLines?: boolean;
}

/** Config directories of clusters not disposed of: removed when the orchestrator exits, whatever happened. */
const dirs = new Set<string>();
process.once('exit', () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * A running `flotilla start` on a generated YAML file (see `ClusterProcess`),
 * which keeps the per-request lines out of `lines`: under load they are most
 * of the output.
 */
export class Cluster extends ClusterProcess {
  readonly #dir: string;
  readonly #keepRequests: boolean;
  readonly #requestLines: string[] = [];

  constructor(options: ClusterOptions = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-reliability-'));
    dirs.add(dir);
    const configFile = join(dir, 'app.yaml');
    const runtime = options.runtime ?? sourceRuntime();
    writeFileSync(configFile, configYaml({ serviceName: 'reliability', service: runtime.service }, options.config ?? {}));
    super({ cli: runtime.cli, execArgv: runtime.execArgv, configFile, env: options.env });
    this.#dir = dir;
    this.#keepRequests = options.keepRequestLines ?? false;
  }

  /** As `ClusterProcess.ready`, with more time: clusters here start on a machine under load. */
  override ready(workers = 2, timeoutMs = 20_000): Promise<this> {
    return super.ready(workers, timeoutMs);
  }

  /** How many per-request log lines were kept so far (`keepRequestLines`): cheap, for waiting until they stop coming. */
  get requestLineCount(): number {
    return this.#requestLines.length;
  }

  /** The per-request log lines kept so far (`keepRequestLines`), parsed. */
  requestLines(): LogLine[] {
    return this.#requestLines.map(parseLine);
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
  dispose(): void {
    this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
    dirs.delete(this.#dir);
  }

  protected override onLine(text: string): void {
    // per-request lines are most of the output under load: keep them raw (or drop them) without parsing
    if (text.includes('"msg":"request completed"')) {
      if (this.#keepRequests) this.#requestLines.push(text);
      return;
    }
    super.onLine(text);
  }
}
