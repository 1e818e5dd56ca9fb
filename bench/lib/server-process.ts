import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where servers run from: the repository's TypeScript sources (type stripping), or a compiled copy (see build.ts). */
export interface Runtime {
  root: string;
  source: boolean;
}

/** The runtime of launches that name none; `run.ts` switches it to the compiled copy. */
export const runtime: Runtime = { root: ROOT, source: true };
/** Every contender's logs go to stdout, and stdout goes here: the same sink for all, never a TTY. */
const LOG_SINK = openSync('/dev/null', 'w');

/** How to start a server: a script in `bench/servers/`, the flotilla CLI on a YAML file, or another node script (`script`). */
export interface Launch {
  /** `servers/x.ts` (a script taking the port as argv[2]) or `servers/x.yaml` (started by `flotilla start`). */
  entry: string;
  /** `ready <port>` lines to wait for: 1, or the number of cluster workers. */
  readyLines: number;
  /** Core to pin the server's processes to (taskset; children inherit it), or none. */
  core?: number;
  env?: Record<string, string>;
  /** Extra node flags (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** Default: `runtime`. */
  runtime?: Runtime;
  /**
   * A node script and its arguments to run instead of the one `entry` names (another CLI, e.g.
   * `wattpm start <folder>`); `entry` then only names the contender's files. Paths relative to the runtime's root.
   */
  script?: string[];
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) killGroup(child);
});
// Ctrl-C or a kill: run the exit handlers (servers killed, temporary build removed)
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}

/** A server under test, in its own process group; stdout (logs) to /dev/null, stderr read for `ready <port>`. */
export class ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly spawnedAt = performance.now();
  /** Milliseconds from spawn to each `ready` line. */
  readonly readyMs: number[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  #stderr: string[] = [];

  private constructor(launch: Launch, port: number, env: Record<string, string>) {
    this.port = port;
    const { root, source } = launch.runtime ?? runtime;
    const node = [process.execPath, ...(source ? ['--conditions=source'] : []), ...(launch.nodeFlags ?? [])];
    const js = (path: string) => (source ? path : path.replace(/\.ts$/, '.js'));
    const target =
      launch.script ??
      (launch.entry.endsWith('.yaml')
        ? [js('src/cli/main.ts'), 'start', '--config', `bench/${launch.entry}`]
        : [js(`bench/${launch.entry}`), String(port)]);
    const argv = [...node, ...target];
    const [cmd, ...args] = launch.core === undefined ? argv : ['taskset', '-c', String(launch.core), ...argv];
    this.child = spawn(cmd!, args, {
      cwd: root,
      detached: true,
      stdio: ['ignore', LOG_SINK, 'pipe'],
      env: { ...process.env, ...env, PORT: String(port), ...launch.env },
    });
    live.add(this.child);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        live.delete(this.child);
        resolve({ code, signal, atMs: performance.now() });
      }),
    );
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (line.startsWith('ready ')) this.readyMs.push(performance.now() - this.spawnedAt);
        else if (line.trim() !== '') this.#stderr = [...this.#stderr.slice(-30), line];
      }
    });
  }

  /** Spawns the server and resolves once it has said `ready` `launch.readyLines` times. */
  static async start(launch: Launch, port: number, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<ServerProcess> {
    const server = new ServerProcess(launch, port, env);
    const deadline = performance.now() + timeoutMs;
    let gone = false;
    void server.exited.then(() => (gone = true));
    while (server.readyMs.length < launch.readyLines) {
      if (gone || performance.now() > deadline) {
        server.kill();
        throw new Error(`${launch.entry} did not get ready (${gone ? 'exited' : 'timeout'}):\n${server.stderrTail}`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    return server;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get stderrTail(): string {
    return this.#stderr.join('\n');
  }

  /** Sends `signal` and resolves with the milliseconds until the process exited (SIGKILL to the group after `timeoutMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<number> {
    const sent = performance.now();
    this.child.kill(signal);
    const timer = setTimeout(() => this.kill(), timeoutMs);
    const { atMs } = await this.exited;
    clearTimeout(timer);
    this.kill(); // whatever is left of the group
    return atMs - sent;
  }

  kill(): void {
    killGroup(this.child);
  }
}
