/**
 * The example's list route on each of its storages, side by side in one run:
 * the in-memory array, the embedded SQLite file and PostgreSQL (a throwaway
 * server, `tools/postgres-server.ts`). The service (and PostgreSQL) run on
 * core 1, wrk on core 0; each round starts every contender afresh, in turn.
 * Reported per scenario: requests/s, p99 latency, and CPU per request of the
 * service and of the database server, medians over the rounds.
 *
 *   node --conditions=source bench/database.ts [--rounds 3] [--duration 8] [--connections 16]
 *
 * Writes bench/results/database.md and database.json.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PostgresServer } from '../tools/postgres-server.ts';
import { readProc } from '../tools/proc.ts';
import { CLK_TCK, processTree, treeCpuSeconds } from './lib/proc.ts';
import { ROOT } from './lib/server-process.ts';
import { median, sig } from './lib/stats.ts';
import { ensureWrk, runWrk } from './lib/wrk.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '16' },
  },
});
const ROUNDS = Number(values.rounds);
const DURATION_S = Number(values.duration);
const WARMUP_S = 2;
const CONNECTIONS = Number(values.connections);
const SERVER_CORE = 1;
const WRK_CORE = 0;

const CONTENDERS = ['memory', 'sqlite', 'postgres'] as const;
type Contender = (typeof CONTENDERS)[number];
const SCENARIOS = {
  list: '/api/books?page=3&limit=20',
  deep: '/api/books?page=240&limit=20',
  search: '/api/books?q=winter&page=2&limit=20',
} as const;
type Scenario = keyof typeof SCENARIOS;

interface Sample {
  rps: number;
  p99Ms: number;
  /** CPU of the service's process per request, µs. */
  serviceUs: number;
  /** CPU of PostgreSQL's processes per request, µs (0 for the others: SQLite runs inside the service). */
  databaseUs: number;
  errors: number;
}

async function startServer(
  contender: Contender,
  env: Record<string, string>,
): Promise<{ pid: number; port: number; stop(): Promise<void> }> {
  const args = ['-c', String(SERVER_CORE), process.execPath, '--conditions=source', join(ROOT, 'bench/services/books-server.ts')];
  const child = spawn('taskset', args, { env: { ...process.env, ...env, BENCH_BOOKS: contender }, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = /READY (\d+)/.exec(err);
      if (m !== null) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${contender} exited (${code}):\n${err}`)));
  });
  return {
    pid: child.pid ?? 0,
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * CPU seconds of PostgreSQL so far: the postmaster's own and its children's, the live ones (their
 * utime + stime) and those that exited (in the postmaster's cutime + cstime once it reaped them):
 * backends come and go (a cancelled query's connection is closed, a CancelRequest is a backend).
 */
function postgresCpuSeconds(postmaster: number): number {
  const fields = (pid: number) => {
    const stat = readProc(`/proc/${pid}/stat`) ?? '';
    return stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
  };
  const own = fields(postmaster);
  let ticks = (own[11] ?? 0) + (own[12] ?? 0) + (own[13] ?? 0) + (own[14] ?? 0);
  for (const pid of processTree(postmaster).slice(1)) {
    const f = fields(pid);
    ticks += (f[11] ?? 0) + (f[12] ?? 0) + (f[13] ?? 0) + (f[14] ?? 0);
  }
  return ticks / CLK_TCK;
}

async function main(): Promise<void> {
  const wrk = ensureWrk();
  if (cpus().length < 2) throw new Error('needs 2 cores: the service on one, wrk on the other');
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-books-'));
  const postgres = await PostgresServer.create();
  try {
    // PostgreSQL shares the service's core: the figure is what one core does with the database beside it
    execFileSync('taskset', ['-a', '-p', '-c', String(SERVER_CORE), String(postgres.pid)], { stdio: 'ignore' });
    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...CONTENDERS.slice(round % CONTENDERS.length), ...CONTENDERS.slice(0, round % CONTENDERS.length)];
      for (const contender of order) {
        const file = join(dir, `books-${round}.sqlite`);
        if (contender === 'postgres') await reset(postgres.url);
        const server = await startServer(contender, { BENCH_BOOKS_FILE: file, BENCH_BOOKS_URL: postgres.url });
        try {
          for (const [scenario, path] of Object.entries(SCENARIOS) as [Scenario, string][]) {
            const load = {
              port: server.port,
              path,
              connections: CONNECTIONS,
              headers: { Origin: 'http://localhost:8080' },
              core: WRK_CORE,
            };
            await runWrk({ ...load, durationS: WARMUP_S });
            const cpu0 = treeCpuSeconds(server.pid);
            const db0 = contender === 'postgres' ? postgresCpuSeconds(postgres.pid ?? 0) : 0;
            const r = await runWrk({ ...load, durationS: DURATION_S });
            const cpu = treeCpuSeconds(server.pid) - cpu0;
            const db = contender === 'postgres' ? postgresCpuSeconds(postgres.pid ?? 0) - db0 : 0;
            const errors = r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;
            const sample = {
              rps: r.rps,
              p99Ms: r.latencyMs.p99,
              serviceUs: (cpu / r.requests) * 1e6,
              databaseUs: (db / r.requests) * 1e6,
              errors,
            };
            const key = `${scenario}:${contender}`;
            samples.set(key, [...(samples.get(key) ?? []), sample]);
            process.stderr.write(
              `round ${round + 1} ${key}: ${Math.round(sample.rps)} req/s, p99 ${sig(sample.p99Ms)} ms, ${sig(sample.serviceUs)} + ${sig(sample.databaseUs)} µs CPU/req\n`,
            );
          }
        } finally {
          await server.stop();
        }
      }
    }
    report(samples, wrk);
  } finally {
    await postgres.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh database for a PostgreSQL round: the service migrates and seeds it on its start. */
async function reset(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('DROP TABLE IF EXISTS books, schema_migrations');
  await client.end();
}

function report(samples: Map<string, Sample[]>, wrk: string): void {
  const rows: string[] = [];
  const json: Record<string, Record<string, Sample>> = {};
  for (const scenario of Object.keys(SCENARIOS) as Scenario[]) {
    for (const contender of CONTENDERS) {
      const s = samples.get(`${scenario}:${contender}`) ?? [];
      const m = (f: (x: Sample) => number) => median(s.map(f));
      const med: Sample = {
        rps: m((x) => x.rps),
        p99Ms: m((x) => x.p99Ms),
        serviceUs: m((x) => x.serviceUs),
        databaseUs: m((x) => x.databaseUs),
        errors: m((x) => x.errors),
      };
      json[scenario] = { ...json[scenario], [contender]: med };
      const total = med.serviceUs + med.databaseUs;
      rows.push(
        `| ${scenario} | ${contender} | ${Math.round(med.rps)} | ${sig(med.p99Ms)} | ${sig(med.serviceUs)} | ${contender === 'postgres' ? sig(med.databaseUs) : '—'} | ${sig(total)} | ${med.errors} |`,
      );
    }
  }
  const paths = Object.entries(SCENARIOS)
    .map(([name, path]) => `\`${name}\`: \`GET ${path}\``)
    .join(', ');
  const md = `# The example's list route on its storages

\`node --conditions=source bench/database.ts --rounds ${ROUNDS} --duration ${DURATION_S} --connections ${CONNECTIONS}\`, ${new Date().toISOString().slice(0, 10)}, ${wrk}, Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores).

The example service standalone (\`bench/services/books-server.ts\`: request log lines, CORS, metrics, the
response schema), its 5 000 seed books in memory, in the embedded SQLite file or in PostgreSQL (a
throwaway server on the same machine, pool of 10). The service and PostgreSQL share core ${SERVER_CORE}, wrk
(${CONNECTIONS} keep-alive connections) runs on core ${WRK_CORE}; medians of ${ROUNDS} rounds of ${DURATION_S} s, each contender
started afresh per round. Scenarios: ${paths}.

| scenario | storage | req/s | p99 ms | service CPU µs/req | PostgreSQL CPU µs/req | total CPU µs/req | errors |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
  writeFileSync(join(ROOT, 'bench/results/database.md'), md);
  writeFileSync(
    join(ROOT, 'bench/results/database.json'),
    `${JSON.stringify({ rounds: ROUNDS, durationS: DURATION_S, connections: CONNECTIONS, results: json }, null, 2)}\n`,
  );
  process.stdout.write(md);
}

await main();
