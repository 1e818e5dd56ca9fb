import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ServerProcess, upOrDisposed } from './throwaway-server.ts';

/** The directory of PostgreSQL's server programs: Debian's `/usr/lib/postgresql/<version>/bin`, the newest version; undefined when not installed. */
export function pgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

/** Who runs the server: PostgreSQL refuses root, so as root the `postgres` user (or `nobody`); else this process's user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) =>
        Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      // no such user: the next one
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL');
}

/**
 * A throwaway PostgreSQL cluster: `initdb` into a temporary directory, then `postgres` on a free
 * port of 127.0.0.1 (its unix socket in that directory too), as an unprivileged user when run as
 * root, with durability turned off (a test database), trusting local connections. `stop()` (a fast
 * shutdown: sessions are cut) and `start()` take it down and bring it back on the same port with
 * the same data; `dispose()` stops it and removes the directory.
 *
 * @example
 * const pg = await PostgresServer.create();
 * try { use(pg.url); } finally { await pg.dispose(); } // postgres://flotilla@127.0.0.1:<port>/postgres
 */
export class PostgresServer {
  readonly port: number;
  readonly #bin: string;
  readonly #dir: string;
  readonly #user: { uid: number; gid: number } | undefined;
  #process: ServerProcess | undefined;

  private constructor(bin: string, port: number, dir: string, user: { uid: number; gid: number } | undefined) {
    this.#bin = bin;
    this.port = port;
    this.#dir = dir;
    this.#user = user;
  }

  static async create(): Promise<PostgresServer> {
    const bin = pgBin();
    if (bin === undefined) throw new Error('PostgreSQL is not installed (Debian package "postgresql")');
    const user = serverUser();
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-pg-'));
    const server = new PostgresServer(bin, await freePort(), dir, user);
    return upOrDisposed(server, async () => {
      if (user !== undefined) chownSync(dir, user.uid, user.gid);
      const initdb = ['-D', join(dir, 'data'), '-U', 'flotilla', '--auth=trust', '--no-sync', '--no-locale', '-E', 'UTF8'];
      execFileSync(join(bin, 'initdb'), initdb, { cwd: dir, stdio: 'pipe', ...user });
      await server.start();
    });
  }

  /** The postmaster's pid while it runs (its backends are its children): what a benchmark counts the CPU of. */
  get pid(): number | undefined {
    return this.#process?.pid;
  }

  /** `postgres://flotilla@127.0.0.1:<port>/postgres` */
  get url(): string {
    return `postgres://flotilla@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    if (this.#process !== undefined) return;
    // biome-ignore format: one option and its value a line
    const args = [
      '-D', join(this.#dir, 'data'), '-p', String(this.port), '-k', this.#dir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
      '-c', 'max_connections=50', '-c', 'shared_buffers=16MB',
    ];
    this.#process = await ServerProcess.launch('postgres', join(this.#bin, 'postgres'), args, /ready to accept connections/, {
      cwd: this.#dir,
      ...this.#user,
    });
  }

  /** Stops the server (SIGINT: a fast shutdown, sessions are cut) and waits for its exit. */
  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
    const running = this.#process;
    this.#process = undefined;
    await running?.stop(signal);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
