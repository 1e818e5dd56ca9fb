import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, cpuTicks } from './proc.ts';

const SCRIPT = fileURLToPath(new URL('./wrk-report.lua', import.meta.url));

export interface LoadOptions {
  port: number;
  /** Path of every request, or with `idCount`, ignored: `/items/1` … `/items/<idCount>` in turn. */
  path: string;
  idCount?: number;
  /** A body to send with every request, as a POST (give its Content-Type in `headers`). */
  body?: string;
  connections: number;
  durationS: number;
  headers: Record<string, string>;
  /** Core wrk is pinned to (taskset), if any. */
  core?: number;
}

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  /** wrk's own CPU seconds (sampled every 50 ms, so up to 50 ms short). */
  cpuS: number;
}

interface Raw {
  requests: number;
  duration_us: number;
  errors: WrkResult['errors'];
  latency_us: WrkResult['latencyMs'];
}

/** One wrk run (one thread; keep-alive unless the headers say `Connection: close`; a POST with `body`); resolves with its counts and latency percentiles. */
export function runWrk(o: LoadOptions): Promise<WrkResult> {
  const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`, '--timeout', '5s', '-s', SCRIPT];
  for (const [name, value] of Object.entries(o.headers)) args.push('-H', `${name}: ${value}`);
  args.push(`http://127.0.0.1:${o.port}${o.path}`);
  const [cmd, argv] = o.core === undefined ? ['wrk', args] : ['taskset', ['-c', String(o.core), 'wrk', ...args]];
  const env = { ...process.env, BENCH_ID_COUNT: o.idCount === undefined ? '' : String(o.idCount), BENCH_BODY: o.body ?? '' };
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    let ticks = 0;
    const poll = setInterval(() => {
      ticks = Math.max(ticks, cpuTicks(child.pid ?? 0));
    }, 50);
    child.once('close', (code) => {
      clearInterval(poll);
      const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (code !== 0 || line === undefined) return reject(new Error(`wrk failed (exit ${code}):\n${out}`));
      const raw = JSON.parse(line.slice('BENCH_JSON '.length)) as Raw;
      const ms = (us: number) => us / 1000;
      const l = raw.latency_us;
      resolve({
        requests: raw.requests,
        durationS: raw.duration_us / 1e6,
        rps: raw.requests / (raw.duration_us / 1e6),
        latencyMs: { p50: ms(l.p50), p90: ms(l.p90), p99: ms(l.p99), max: ms(l.max), mean: ms(l.mean) },
        errors: raw.errors,
        cpuS: ticks / CLK_TCK,
      });
    });
  });
}

/** wrk's version line; installs wrk with apt-get (sudo when not root) when it is missing. */
export function ensureWrk(): string {
  const probe = () => spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  let found = probe();
  if (found.error !== undefined) {
    process.stderr.write('wrk is missing: trying apt-get install -y wrk\n');
    const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
    try {
      execFileSync(sudo[0] ?? 'apt-get', [...(sudo.length > 0 ? ['apt-get'] : []), 'install', '-y', 'wrk'], { stdio: 'inherit' });
    } catch {
      throw new Error('wrk is required (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk)');
    }
    found = probe();
  }
  const first = `${found.stdout}${found.stderr}`.split('\n')[0] ?? '';
  return first.split(' ').slice(0, 2).join(' ') || 'wrk';
}
