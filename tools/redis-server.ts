import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ServerProcess, upOrDisposed } from './throwaway-server.ts';

/** Whether Debian's `redis-server` is installed. */
export function redisInstalled(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A throwaway `redis-server` on a free port of 127.0.0.1, in a temporary directory, with nothing
 * persisted (`--save ''`, `--appendonly no`). `stop()` and `start()` take it down and bring it back
 * on the same port (empty, as a restarted Redis without persistence is); `dispose()` stops it and
 * removes the directory.
 *
 * @example
 * const redis = await RedisServer.create();
 * try { use(redis.url); } finally { await redis.dispose(); }
 */
export class RedisServer {
  readonly port: number;
  readonly #dir: string;
  #process: ServerProcess | undefined;

  private constructor(port: number, dir: string) {
    this.port = port;
    this.#dir = dir;
  }

  static async create(): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), mkdtempSync(join(tmpdir(), 'flotilla-redis-')));
    return upOrDisposed(server, () => server.start());
  }

  /** `redis://127.0.0.1:<port>` */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.#process !== undefined) return;
    // biome-ignore format: one option and its value a line
    const args = [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.#dir,
      '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', '', '--loglevel', 'notice',
    ];
    this.#process = await ServerProcess.launch('redis-server', 'redis-server', args, /Ready to accept connections/);
  }

  /** Stops the server (SIGTERM, or `signal`) and waits for its exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const running = this.#process;
    this.#process = undefined;
    await running?.stop(signal);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
