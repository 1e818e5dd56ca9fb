/**
 * TLS and HTTP/2 (docs/guides/tls-and-http2.md): the paginated route (`GET /items?page=3&limit=20`)
 * of flotilla full over HTTP/1.1 in clear, HTTP/1.1 over TLS, h2 over TLS (ALPN) and h2c, beside
 * Fastify full with `http2: true` over TLS and h2c, loaded by h2load (Debian's `nghttp2-client`).
 * Each server is a process of its own pinned to core 0, h2load to core 1; rounds alternate the
 * contenders. Then `limits.concurrentStreams` against a client that opens far more streams than it
 * allows (4 connections × 1,000 streams, h2c): throughput, mean time per request, streams refused and
 * the server's peak RSS, for the default's choice.
 *
 *   node --conditions=source bench/http2.ts [--rounds 3] [--duration 5]
 *
 * Writes bench/results/tls-and-http2.md and .json. The certificate is a throwaway one made with openssl.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machineMeta, packageVersion } from './lib/meta.ts';
import { CLK_TCK, cpuTicks, rssMb } from './lib/proc.ts';
import { freePort, ServerProcess } from './lib/server-process.ts';
import { median, sig } from './lib/stats.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' } } });
const ROUNDS = Number(values.rounds);
const DURATION_S = Number(values.duration);
const PATH = '/items?page=3&limit=20';

interface Contender {
  readonly name: string;
  readonly entry: string;
  readonly mode: string;
  /** How h2load speaks: `h1` (--h1) or `h2`; over `https` or `http`. */
  readonly wire: 'h1' | 'h2';
  readonly scheme: 'https' | 'http';
}

const CONTENDERS: readonly Contender[] = [
  { name: 'flotilla h1', entry: 'servers/flotilla-h2.ts', mode: 'h1', wire: 'h1', scheme: 'http' },
  { name: 'flotilla h1 TLS', entry: 'servers/flotilla-h2.ts', mode: 'h1-tls', wire: 'h1', scheme: 'https' },
  { name: 'flotilla h2 TLS', entry: 'servers/flotilla-h2.ts', mode: 'h2-tls', wire: 'h2', scheme: 'https' },
  { name: 'flotilla h2c', entry: 'servers/flotilla-h2.ts', mode: 'h2c', wire: 'h2', scheme: 'http' },
  { name: 'fastify h2 TLS', entry: 'servers/fastify-h2.ts', mode: 'h2-tls', wire: 'h2', scheme: 'https' },
  { name: 'fastify h2c', entry: 'servers/fastify-h2.ts', mode: 'h2c', wire: 'h2', scheme: 'http' },
];

interface H2loadResult {
  rps: number;
  meanMs: number;
  maxMs: number;
  succeeded: number;
  failed: number;
}

function h2load(args: string[]): Promise<H2loadResult> {
  return new Promise((resolve, reject) => {
    execFile('taskset', ['-c', '1', 'h2load', ...args], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      if (error !== null && stdout === '') return reject(error);
      const rps = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(stdout)?.[1]);
      const requests = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(stdout);
      const time = /time for request:\s+(\S+)\s+(\S+)\s+(\S+)/.exec(stdout);
      resolve({
        rps,
        meanMs: toMs(time?.[3]),
        maxMs: toMs(time?.[2]),
        succeeded: Number(requests?.[1]),
        failed: Number(requests?.[2]) + Number(requests?.[3]),
      });
    });
  });
}

function toMs(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? '');
  if (match === null) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

/** A throwaway self-signed pair for 127.0.0.1, in `dir` (server.pem, server.key). */
function makeCertificate(dir: string): void {
  writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'].concat([
      '-keyout',
      join(dir, 'server.key'),
      '-out',
      join(dir, 'server.pem'),
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
}

async function run(contender: Contender, certDir: string, load: string[], env: Record<string, string> = {}) {
  const port = await freePort();
  const server = await ServerProcess.start(
    { entry: contender.entry, readyLines: 1, core: 0, env: { MODE: contender.mode, CERT_DIR: certDir, ...env } },
    port,
  );
  try {
    const url = `${contender.scheme}://127.0.0.1:${port}${PATH}`;
    const wire = contender.wire === 'h1' ? ['--h1'] : [];
    // warm-up: the JIT and the TLS session caches
    await h2load([...wire, '-t1', '-c8', '-m1', '-D', '1', url]);
    let peakRss = 0;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssMb(server.pid)?.rss ?? 0);
    }, 100);
    const before = cpuTicks(server.pid);
    const result = await h2load([...wire, ...load, url]);
    const cpuS = (cpuTicks(server.pid) - before) / CLK_TCK;
    clearInterval(sampler);
    return { ...result, cpuPer1k: (cpuS / Math.max(1, result.succeeded)) * 1000, peakRssMb: peakRss };
  } finally {
    await server.stop();
  }
}

const certDir = mkdtempSync(join(tmpdir(), 'flotilla-h2-bench-'));
process.once('exit', () => rmSync(certDir, { recursive: true, force: true }));
makeCertificate(certDir);

// 1. the paginated route, 16 connections; h2: 10 streams at a time on each (h1: one request at a time)
const rows = new Map<string, { rps: number[]; meanMs: number[]; cpu: number[]; failed: number }>();
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse();
  for (const contender of order) {
    const streams = contender.wire === 'h2' ? '10' : '1';
    const r = await run(contender, certDir, ['-t1', '-c16', `-m${streams}`, '-D', String(DURATION_S)]);
    const row = rows.get(contender.name) ?? { rps: [], meanMs: [], cpu: [], failed: 0 };
    row.rps.push(r.rps);
    row.meanMs.push(r.meanMs);
    row.cpu.push(r.cpuPer1k);
    row.failed += r.failed;
    rows.set(contender.name, row);
    process.stderr.write(
      `round ${round + 1} ${contender.name}: ${sig(r.rps)} req/s, mean ${sig(r.meanMs)} ms, ${sig(r.cpuPer1k)} CPU s/1k\n`,
    );
  }
}

// 2. limits.concurrentStreams against a flood of streams (h2c, flotilla)
const flood: Record<string, unknown>[] = [];
for (const streams of [10, 100, 1000]) {
  const r = await run(CONTENDERS[3] as Contender, certDir, ['-t1', '-c4', '-m1000', '-D', String(DURATION_S)], {
    STREAMS: String(streams),
  });
  flood.push({ concurrentStreams: streams, ...r });
  process.stderr.write(
    `flood, concurrentStreams ${streams}: ${sig(r.rps)} req/s, mean ${sig(r.meanMs)} ms, ${r.failed} failed, peak RSS ${sig(r.peakRssMb)} MB\n`,
  );
}

const meta: Record<string, unknown> & { date: string } = {
  ...machineMeta(execFileSync('h2load', ['--version'], { encoding: 'utf8' }).trim()),
  fastify: packageVersion('fastify'),
};
const table = [...rows].map(([name, r]) => ({
  name,
  rps: sig(median(r.rps)),
  meanMs: sig(median(r.meanMs)),
  cpuPer1k: sig(median(r.cpu), 3),
  failed: r.failed,
}));
const results = join(import.meta.dirname, 'results');
writeFileSync(
  join(results, 'tls-and-http2.json'),
  `${JSON.stringify({ meta, rounds: ROUNDS, durationS: DURATION_S, table, flood }, null, 2)}\n`,
);
const md = [
  '# TLS and HTTP/2: the paginated route over h1, h1 TLS, h2 TLS and h2c',
  '',
  `\`node --conditions=source bench/http2.ts --rounds ${ROUNDS} --duration ${DURATION_S}\`, ${meta.date}; ${String(meta['cpu'] ?? '')}; Node ${process.version}, Fastify ${meta.fastify}.`,
  'Server pinned to core 0, h2load to core 1; `GET /items?page=3&limit=20`, 16 connections (h2: 10 streams each at a time; h1: one request at a time), full defaults (request log, CORS, metrics), a P-256 certificate. Medians of the rounds.',
  '',
  '| contender | req/s | mean ms per request | CPU s / 1k requests | failed |',
  '|---|--:|--:|--:|--:|',
  ...table.map((r) => `| ${r.name} | ${r.rps} | ${r.meanMs} | ${r.cpuPer1k} | ${r.failed} |`),
  '',
  '## `limits.concurrentStreams` against a flood of streams',
  '',
  'flotilla h2c, 4 connections each wanting 1,000 streams at once: what the server allows per connection decides how many requests wait inside it.',
  '',
  '| concurrentStreams | req/s | mean ms per request | max ms | refused or failed | peak RSS MB |',
  '|--:|--:|--:|--:|--:|--:|',
  ...flood.map(
    (f) =>
      `| ${f['concurrentStreams']} | ${sig(f['rps'] as number)} | ${sig(f['meanMs'] as number)} | ${sig(f['maxMs'] as number)} | ${f['failed']} | ${sig(f['peakRssMb'] as number)} |`,
  ),
  '',
];
writeFileSync(join(results, 'tls-and-http2.md'), md.join('\n'));
process.stderr.write('wrote bench/results/tls-and-http2.md\n');
