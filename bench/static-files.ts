/**
 * Static files (docs/guides/static-files.md): flotilla's `app.serveStatic` beside Fastify with
 * `@fastify/static`, both on `@fastify/send`, serving the same 10 KB and 1 MB files. Each server is a
 * process of its own (`servers/static-flotilla.ts`, `servers/static-fastify.ts`, from the TypeScript
 * sources), pinned to core 0, wrk to core 1 (2+ cores). After a parity check (same bytes, status and
 * length from both) and a warm-up run of each, rounds alternate the two contenders on each file, the
 * order turning every round; the table gives medians and the ratios flotilla ÷ Fastify taken round
 * by round.
 *
 *   npm run bench:static -- [--rounds 3] [--duration 5] [--connections 16]
 *
 * Writes bench/results/static-files.md and .json.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineMeta, packageVersion } from './lib/meta.ts';
import { CLK_TCK, cpuTicks, cpuTimes, waitQuiet } from './lib/proc.ts';
import { freePort, ServerProcess } from './lib/server-process.ts';
import { median, sig } from './lib/stats.ts';
import { ensureWrk, runWrk } from './lib/wrk.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '2' },
  },
});
const ROUNDS = Number(values.rounds);
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const WARMUP_S = Number(values.warmup);
const FILES = [
  { label: '10 KB', name: 'asset-10k.js', bytes: 10 * 1024 },
  { label: '1 MB', name: 'asset-1m.js', bytes: 1024 * 1024 },
] as const;
const CONTENDERS = [
  { name: 'flotilla', entry: 'servers/static-flotilla.ts' },
  { name: 'fastify', entry: 'servers/static-fastify.ts' },
] as const;
type ContenderName = (typeof CONTENDERS)[number]['name'];

interface Sample {
  contender: ContenderName;
  file: string;
  round: number;
  rps: number;
  mbps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  errors: number;
  noisePct: number;
}

const t0 = performance.now();
const log = (line: string) => process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
const pin = availableParallelism() >= 2;
const [serverCore, wrkCore] = pin ? [0, 1] : [undefined, undefined];

/** One GET: status, the headers, the body's hash and length. */
function fetchOnce(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; sha: string; length: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const hash = createHash('sha256');
      let length = 0;
      res.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        length += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, sha: hash.digest('hex'), length }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A wrk run on one file with the server's CPU time and the machine's other work over it. */
async function measure(server: ServerProcess, file: (typeof FILES)[number], durationS: number) {
  const machineBefore = cpuTimes().get('cpu');
  const before = cpuTicks(server.pid);
  const wrk = await runWrk({
    port: server.port,
    path: `/static/${file.name}`,
    connections: CONNECTIONS,
    durationS,
    headers: {},
    ...(wrkCore === undefined ? {} : { core: wrkCore }),
  });
  const cpuS = (cpuTicks(server.pid) - before) / CLK_TCK;
  const machineAfter = cpuTimes().get('cpu');
  const machineS = machineBefore && machineAfter ? machineAfter.busy - machineBefore.busy + machineAfter.steal - machineBefore.steal : 0;
  const e = wrk.errors;
  return {
    rps: wrk.rps,
    mbps: (wrk.rps * file.bytes) / 1e6,
    p50Ms: wrk.latencyMs.p50,
    p99Ms: wrk.latencyMs.p99,
    cpuUsPerRequest: (cpuS * 1e6) / Math.max(1, wrk.requests),
    errors: e.connect + e.read + e.write + e.status + e.timeout,
    noisePct: Math.max(0, ((machineS - cpuS - wrk.cpuS) / wrk.durationS) * 100),
  };
}

const wrkVersion = ensureWrk();
const dir = mkdtempSync(join(tmpdir(), 'flotilla-static-bench-'));
const servers = new Map<ContenderName, ServerProcess>();
const samples: Sample[] = [];
const parity: string[] = [];
const heads: Record<string, Record<string, unknown>> = {};
try {
  for (const file of FILES) writeFileSync(join(dir, file.name), randomBytes((file.bytes * 3) / 4).toString('base64'));
  const busy = await waitQuiet(60, 0.1, (b) => log(`waiting for an idle machine: ${Math.round(b * 100)} % busy`));
  if (busy >= 0.1) log(`the machine is still ${Math.round(busy * 100)} % busy: expect noisy numbers`);
  for (const c of CONTENDERS) {
    const launch = { entry: c.entry, readyLines: 1, ...(serverCore === undefined ? {} : { core: serverCore }) };
    servers.set(c.name, await ServerProcess.start(launch, await freePort(), { STATIC_ROOT: dir }));
  }
  for (const file of FILES) {
    const answers = await Promise.all(
      CONTENDERS.map(async (c) => [c.name, await fetchOnce(servers.get(c.name)!.port, `/static/${file.name}`)] as const),
    );
    for (const [name, a] of answers) {
      heads[`${name} ${file.label}`] = a.headers;
      if (a.status !== 200 || a.length !== file.bytes) parity.push(`${name} ${file.label}: ${a.status}, ${a.length} bytes`);
    }
    if (new Set(answers.map(([, a]) => a.sha)).size !== 1) parity.push(`${file.label}: the bodies differ`);
  }
  if (parity.length > 0) throw new Error(`parity failed:\n${parity.join('\n')}`);
  for (const file of FILES) for (const c of CONTENDERS) await measure(servers.get(c.name)!, file, WARMUP_S);
  log(`warmed up; ${ROUNDS} rounds of ${DURATION_S} s, ${CONNECTIONS} connections`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const file of FILES) {
      const order = round % 2 === 1 ? CONTENDERS : [...CONTENDERS].reverse();
      for (const c of order) {
        const sample = { contender: c.name, file: file.label, round, ...(await measure(servers.get(c.name)!, file, DURATION_S)) };
        samples.push(sample);
        log(`round ${round} ${file.label} ${c.name}: ${Math.round(sample.rps)} req/s, ${sample.cpuUsPerRequest.toFixed(1)} µs CPU/request`);
      }
    }
  }
} finally {
  for (const server of servers.values()) server.kill();
  rmSync(dir, { recursive: true, force: true });
}

const pick = (contender: string, file: string) => samples.filter((s) => s.contender === contender && s.file === file);
const med = (list: readonly Sample[], f: (s: Sample) => number) => median(list.map(f));
/** flotilla ÷ Fastify, round by round, then the median. */
function ratio(file: string, f: (s: Sample) => number): number {
  const ours = pick('flotilla', file);
  const theirs = pick('fastify', file);
  return median(ours.map((s) => f(s) / f(theirs.find((o) => o.round === s.round) ?? s)));
}

const rows = FILES.flatMap((file) =>
  CONTENDERS.map((c) => {
    const list = pick(c.name, file.label);
    const errors = list.reduce((n, s) => n + s.errors, 0);
    return `| ${file.label} | ${c.name} | ${sig(med(list, (s) => s.rps))} | ${sig(med(list, (s) => s.mbps))} | ${sig(med(list, (s) => s.p50Ms))} | ${sig(med(list, (s) => s.p99Ms))} | ${sig(med(list, (s) => s.cpuUsPerRequest))} | ${errors} | ${Math.round(med(list, (s) => s.noisePct))} |`;
  }),
);
const ratios = FILES.map(
  (file) =>
    `| ${file.label} | ${ratio(file.label, (s) => s.rps).toFixed(2)} | ${ratio(file.label, (s) => s.cpuUsPerRequest).toFixed(2)} | ${ratio(file.label, (s) => s.p99Ms).toFixed(2)} |`,
);
const headLines = Object.entries(heads).map(
  ([key, h]) =>
    `- ${key}: ${Object.entries(h)
      .filter(([name]) => name !== 'date' && name !== 'x-request-id' && name !== 'last-modified')
      .map(([name, value]) => `\`${name}: ${String(value)}\``)
      .join(', ')}`,
);
const meta = machineMeta(wrkVersion);
const versions = `Fastify ${packageVersion('fastify')}, @fastify/static ${packageVersion('@fastify/static')}, @fastify/send ${packageVersion('@fastify/send')}`;
const report = `# Static files: \`app.serveStatic\` beside \`@fastify/static\`

Measured ${meta.date.slice(0, 10)} by \`npm run bench:static -- --rounds ${ROUNDS} --duration ${DURATION_S} --connections ${CONNECTIONS}\`
(\`bench/static-files.ts\`) on ${meta.cores} CPUs (${String(meta.cpu)}), Node ${String(meta.node)}, ${wrkVersion}, commit ${String(meta.commit)};
${versions}.

## Method

- Two files of random base64 text, \`asset-10k.js\` (10,240 bytes) and \`asset-1m.js\` (1,048,576 bytes), in a temporary
  directory, served by both contenders under \`/static/\`: each a process of its own, from the TypeScript sources
  (\`--conditions=source\`), ${pin ? 'pinned to core 0, wrk (1 thread) to core 1' : 'unpinned (fewer than 2 cores)'}.
- **flotilla** (\`bench/servers/static-flotilla.ts\`): a standalone App with its defaults (metrics, tracing with the
  API's no-op tracer, request ids, security headers, CORS, compression on), \`env: production\`, no request log line;
  \`app.serveStatic('/static', root)\` with its defaults (precompressed siblings looked for only when a request takes
  an encoding, which wrk's do not). It reads a file of at most 64 KiB whole and sends it as one buffer, and
  streams larger ones (\`src/app/static/send-file.ts\`, \`BUFFERED_MAX\`); it checks each file's real path against
  the directory's, once per file identity (\`root-guard.ts\`).
- Both read files 64 KiB at a time (the default of \`fs.createReadStream\`).
- **fastify** (\`bench/servers/static-fastify.ts\`): Fastify 5, logger off, \`@fastify/static\` with its defaults;
  nothing else (no hooks, metrics or security headers), so its figures are a floor for what the same library
  does with the least around it.
- Before measuring, both answer each file with a 200, the same length and the same SHA-256. wrk sends no
  \`Accept-Encoding\`: both send the file as it is, with its \`Content-Length\`, on keep-alive connections.
- A warm-up run of ${WARMUP_S} s per contender and file, then ${ROUNDS} rounds of ${DURATION_S} s at ${CONNECTIONS} connections, the two
  contenders alternating on each file, the order turning every round. **CPU µs/request**: utime + stime of the
  server process from \`/proc/<pid>/stat\` over the run ÷ requests. **noise %**: the machine's other work (CPU of
  every process but the server and wrk, plus steal) in % of one core. Medians over the rounds; the ratios are
  taken round by round (the two ran seconds apart), then their median.

## Figures

| file | contender | req/s | MB/s | p50 ms | p99 ms | CPU µs/request | errors | noise % |
|---|---|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

## flotilla ÷ Fastify (round by round, median)

| file | req/s | CPU per request | p99 |
|---|---:|---:|---:|
${ratios.join('\n')}

## What each sent (one response per file, \`date\`, \`x-request-id\` and \`last-modified\` left out)

${headLines.join('\n')}
`;
const out = fileURLToPath(new URL('./results/static-files', import.meta.url));
writeFileSync(`${out}.md`, report);
writeFileSync(
  `${out}.json`,
  `${JSON.stringify({ meta: { ...meta, rounds: ROUNDS, durationS: DURATION_S, connections: CONNECTIONS }, samples }, null, 2)}\n`,
);
process.stdout.write(report);
