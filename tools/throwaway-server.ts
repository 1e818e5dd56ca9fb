import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** Servers still possibly running: SIGKILLed when the test process exits, whatever happened. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A TCP port on 127.0.0.1 that the OS says is free (a server is started on it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs `setUp` (an initdb, then the start), and hands the server over once it is up; when anything
 * fails on the way, the server is disposed of (its process, its directory) before the error goes on.
 */
export async function upOrDisposed<S extends { dispose(): Promise<void> }>(server: S, setUp: () => Promise<void>): Promise<S> {
  try {
    await setUp();
    return server;
  } catch (error) {
    await server.dispose();
    throw error;
  }
}

/**
 * One run of a server process (redis-server, postgres): started by `launch`, ready once a line
 * of its output matches `ready`, stopped with `stop()`. Its output is kept for error messages.
 */
export class ServerProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  output = '';

  private constructor(child: ChildProcess) {
    this.#child = child;
    running.add(child);
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    void this.#exited.then(() => running.delete(child));
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-8_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static async launch(
    what: string,
    command: string,
    args: readonly string[],
    ready: RegExp,
    options: SpawnOptions = {},
  ): Promise<ServerProcess> {
    const server = new ServerProcess(spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] }));
    const deadline = Date.now() + 30_000;
    while (!ready.test(server.output)) {
      if (server.#child.exitCode !== null || server.#child.signalCode !== null) {
        throw new Error(`${what} exited before it was ready:\n${server.output}`);
      }
      if (Date.now() > deadline) {
        server.#child.kill('SIGKILL');
        throw new Error(`${what} was not ready within 30 s:\n${server.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return server;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Sends `signal` and resolves once the process has exited (SIGKILL after 10 s). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000);
    await this.#exited;
    clearTimeout(timer);
  }
}
