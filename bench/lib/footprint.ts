/**
 * `npm run bench -- --footprint`: what an idle pod costs, a 2-worker flotilla
 * cluster (env: production) beside Fastify 5 in node:cluster with 2 workers,
 * in alternating rounds: CPU, PSS and wake-ups of the whole process tree (per
 * process and per thread) over an idle window, and the cold start to the first
 * 200 with a warm and a cold compile cache. See bench/README.md, "Footprint".
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../../tools/proc.ts';
import { get } from './http.ts';
import { CLK_TCK, cpuTicks, cpuTimes, processTree, type ThreadStat, threadStats, waitQuiet } from './proc.ts';
import { pssOf } from './pss.ts';
import { freePort, type Launch, ServerProcess } from './server-process.ts';
import { median } from './stats.ts';

/** Seconds of the idle window, and of the settle before it (after the start and the warm-up requests). */
export const IDLE_S = 10;
export const SETTLE_MS = 3000;
export const WARMUP_REQUESTS = 20;
/** A window in which other processes took more than this (% of one core) is noisy. */
export const FOOTPRINT_NOISY_PCT = 10;

export interface FootprintContender {
  name: string;
  title: string;
  launch: Launch;
  /** Names for threads by process role and `comm` (a worker_threads Worker is `WorkerThread` whatever it does). */
  threadNames: Partial<Record<Role, Record<string, string>>>;
}

type Role = 'primary' | 'worker';

export const FOOTPRINT_CONTENDERS: readonly FootprintContender[] = [
  {
    name: 'flotilla-cluster',
    title: 'flotilla cluster, 2 workers, env: production (CLI)',
    launch: {
      entry: 'servers/flotilla-cluster.yaml',
      readyLines: 2,
      env: { WORKERS: '2', SERVICE_ENV: 'production', NODE_ENV: 'production' },
    },
    threadNames: { primary: { WorkerThread: 'service thread' }, worker: { WorkerThread: 'watchdog thread' } },
  },
  {
    name: 'fastify-cluster',
    title: 'Fastify 5, node:cluster with 2 workers',
    launch: { entry: 'servers/fastify-cluster.ts', readyLines: 2, env: { NODE_ENV: 'production' } },
    threadNames: {},
  },
];

export interface ThreadKind {
  /** `MainThread`, `watchdog thread`, `V8Worker`, … */
  kind: string;
  count: number;
  /** % of one core over the window. */
  cpuPct: number;
  wakeupsPerS: number;
}

export interface ProcessFootprint {
  /** `primary`, `worker 1`, `worker 2` (workers in pid order). */
  label: string;
  pid: number;
  cpuPct: number;
  wakeupsPerS: number;
  pssMb: number;
  privateMb: number;
  threads: ThreadKind[];
}

export interface IdleRound {
  contender: string;
  round: number;
  windowS: number;
  cpuPct: number;
  wakeupsPerS: number;
  pssMb: number;
  privateMb: number;
  processes: ProcessFootprint[];
  /** CPU of every other process on the machine (and steal) during the window, % of one core. */
  noisePct: number;
}

export interface ColdStartRun {
  contender: string;
  round: number;
  cache: 'warm' | 'cold';
  /** Spawn → the first 200 on `GET /items/1`. */
  ms: number;
  /** CPU time of the tree by then (every process, every thread): what a busy machine distorts least. */
  cpuMs: number;
  noisePct: number;
}

export interface FootprintResults {
  meta: Record<string, unknown> & { date: string };
  contenders: { name: string; title: string }[];
  idle: IdleRound[];
  coldStarts: ColdStartRun[];
  /** Files and kB of each contender's warm compile cache after its priming start. */
  warmCache: Record<string, { files: number; kb: number }>;
  /** `strace -c -f -p <worker 1>` over an idle window of round 1, per contender. */
  strace?: Record<string, string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Busy + steal seconds of the whole machine, and this process's own CPU seconds. */
function clocks(): { machineS: number; selfS: number } {
  const cpu = cpuTimes().get('cpu');
  const self = process.cpuUsage();
  return { machineS: cpu === undefined ? 0 : cpu.busy + cpu.steal, selfS: (self.user + self.system) / 1e6 };
}

/** Other processes' CPU over a window, % of one core: the machine's busy time minus the tree's and this process's. */
function noisePct(before: ReturnType<typeof clocks>, after: ReturnType<typeof clocks>, treeS: number, windowS: number): number {
  return Math.max(0, ((after.machineS - before.machineS - (after.selfS - before.selfS) - treeS) / windowS) * 100);
}

/** Starts a contender on fresh ports with its compile cache in `cacheDir`; `readyLines: 0` returns at spawn. */
async function startIn(c: FootprintContender, cacheDir: string, readyLines = c.launch.readyLines): Promise<ServerProcess> {
  return ServerProcess.start({ ...c.launch, readyLines }, await freePort(), {
    METRICS_PORT: String(await freePort()),
    NODE_COMPILE_CACHE: cacheDir,
  });
}

/**
 * SIGTERM to the started process, then waits (10 s at most) for every process
 * of its tree to be gone before killing what is left: node:cluster workers exit
 * on their own once the primary is gone, and only a process that exits writes
 * its compile cache.
 */
async function stopTree(server: ServerProcess): Promise<void> {
  const tree = processTree(server.pid);
  server.child.kill('SIGTERM');
  const until = performance.now() + 10_000;
  while (tree.some(isAlive) && performance.now() < until) await sleep(20);
  server.kill();
  await server.exited;
}

/** Spawn → the first 200 on `GET /items/1`, asked on a fresh connection every 5 ms; the tree's CPU seconds by then. */
async function firstOk(server: ServerProcess): Promise<{ ms: number; treeS: number }> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const status = await get(server.port, '/items/1').then(
      (reply) => reply.status,
      () => 0,
    );
    if (status === 200) {
      const ms = performance.now() - server.spawnedAt;
      return { ms, treeS: processTree(server.pid).reduce((sum, p) => sum + cpuTicks(p), 0) / CLK_TCK };
    }
    if (performance.now() > deadline) throw new Error(`${server.child.spawnargs.join(' ')}: no 200 within 30 s\n${server.stderrTail}`);
    await sleep(5);
  }
}

async function coldStart(c: FootprintContender, cache: 'warm' | 'cold', warmDir: string, round: number): Promise<ColdStartRun> {
  const dir = cache === 'warm' ? warmDir : mkdtempSync(join(tmpdir(), 'flotilla-footprint-cold-'));
  const before = clocks();
  const server = await startIn(c, dir, 0);
  const { ms, treeS } = await firstOk(server);
  const noise = noisePct(before, clocks(), treeS, ms / 1000);
  await stopTree(server);
  if (cache === 'cold') rmSync(dir, { recursive: true, force: true });
  return { contender: c.name, round, cache, ms, cpuMs: treeS * 1000, noisePct: noise };
}

/** Files and kB under a directory. */
function dirSize(dir: string): { files: number; kb: number } {
  const files = (readdirSync(dir, { recursive: true }) as string[]).map((f) => statSync(join(dir, f))).filter((s) => s.isFile());
  return { files: files.length, kb: Math.round(files.reduce((sum, s) => sum + s.size, 0) / 1024) };
}

interface Sample {
  procs: { pid: number; label: string; ticks: number; threads: ThreadStat[] }[];
}

function sampleTree(pid: number): Sample {
  const [primary, ...workers] = processTree(pid);
  const labelled = [
    { pid: primary!, label: 'primary' },
    ...workers.sort((a, b) => a - b).map((p, i) => ({ pid: p, label: `worker ${i + 1}` })),
  ];
  return { procs: labelled.map((p) => ({ ...p, ticks: cpuTicks(p.pid), threads: threadStats(p.pid) })) };
}

/** CPU and wake-ups of each process and thread between two samples, with each process's PSS now. */
function idleFigures(c: FootprintContender, a: Sample, b: Sample, windowS: number): ProcessFootprint[] {
  const pct = (ticks: number) => (ticks / CLK_TCK / windowS) * 100;
  return b.procs.map((p) => {
    const was = a.procs.find((q) => q.pid === p.pid);
    const role: Role = p.label === 'primary' ? 'primary' : 'worker';
    const kinds = new Map<string, ThreadKind>();
    let switches = 0;
    for (const t of p.threads) {
      const old = was?.threads.find((u) => u.tid === t.tid);
      const dTicks = t.ticks - (old?.ticks ?? 0);
      const dSwitches = t.switches - (old?.switches ?? 0);
      switches += dSwitches;
      const kind = c.threadNames[role]?.[t.comm] ?? t.comm;
      const k = kinds.get(kind) ?? { kind, count: 0, cpuPct: 0, wakeupsPerS: 0 };
      kinds.set(kind, { kind, count: k.count + 1, cpuPct: k.cpuPct + pct(dTicks), wakeupsPerS: k.wakeupsPerS + dSwitches / windowS });
    }
    const mem = pssOf(p.pid);
    return {
      label: p.label,
      pid: p.pid,
      cpuPct: pct(p.ticks - (was?.ticks ?? 0)),
      wakeupsPerS: switches / windowS,
      pssMb: mem?.pssMb ?? Number.NaN,
      privateMb: mem?.privateMb ?? Number.NaN,
      threads: [...kinds.values()],
    };
  });
}

/** `strace -c -f -p pid` for `seconds`: its syscall summary, or why there is none. */
async function straceSummary(pid: number, seconds: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-footprint-strace-'));
  const file = join(dir, 'summary.txt');
  try {
    const child = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', (e) => {
        stderr += e.message;
        resolve();
      });
    });
    await sleep(seconds * 1000);
    child.kill('SIGINT');
    await exited;
    try {
      return readFileSync(file, 'utf8').trimEnd();
    } catch {
      return `no summary: ${stderr.trim() || 'strace wrote nothing'}`;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One idle window of one contender: start, warm-up requests, settle, IDLE_S seconds sampled, PSS, stop. */
async function idleRound(
  c: FootprintContender,
  warmDir: string,
  round: number,
  strace: boolean,
): Promise<{ idle: IdleRound; strace?: string }> {
  const server = await startIn(c, warmDir);
  for (let i = 0; i < WARMUP_REQUESTS; i++) await get(server.port, i % 2 === 0 ? '/items/1' : '/items?page=3&limit=20');
  await sleep(SETTLE_MS);
  const before = clocks();
  const a = sampleTree(server.pid);
  const t0 = performance.now();
  await sleep(IDLE_S * 1000);
  const b = sampleTree(server.pid);
  const windowS = (performance.now() - t0) / 1000;
  const after = clocks();
  const processes = idleFigures(c, a, b, windowS);
  const sum = (f: (p: ProcessFootprint) => number) => processes.reduce((s, p) => s + f(p), 0);
  const cpuPct = sum((p) => p.cpuPct);
  const idle: IdleRound = {
    contender: c.name,
    round,
    windowS,
    cpuPct,
    wakeupsPerS: sum((p) => p.wakeupsPerS),
    pssMb: sum((p) => p.pssMb),
    privateMb: sum((p) => p.privateMb),
    processes,
    noisePct: noisePct(before, after, (cpuPct / 100) * windowS, windowS),
  };
  const worker = processes.find((p) => p.label === 'worker 1');
  const summary = strace && worker !== undefined ? await straceSummary(worker.pid, IDLE_S) : undefined;
  await stopTree(server);
  return { idle, ...(summary === undefined ? {} : { strace: summary }) };
}

export interface FootprintOptions {
  rounds: number;
  strace: boolean;
  log: (line: string) => void;
}

/** Whether strace can be run. */
function hasStrace(): boolean {
  return (process.env['PATH'] ?? '').split(':').some((dir) => {
    try {
      return statSync(join(dir, 'strace')).isFile();
    } catch {
      return false;
    }
  });
}

/** The measurements, round after round, the two contenders in turn (first one way, then the other). */
export async function runFootprint(o: FootprintOptions): Promise<Omit<FootprintResults, 'meta'>> {
  const contenders = FOOTPRINT_CONTENDERS;
  const warmDirs = new Map(contenders.map((c) => [c.name, mkdtempSync(join(tmpdir(), `flotilla-footprint-warm-${c.name}-`))]));
  process.once('exit', () => {
    for (const dir of warmDirs.values()) rmSync(dir, { recursive: true, force: true });
  });
  const warmCache: FootprintResults['warmCache'] = {};
  for (const c of contenders) {
    // the priming start: what a previous start of the same service leaves in its compile cache
    const server = await startIn(c, warmDirs.get(c.name)!);
    for (let i = 0; i < 4; i++) await get(server.port, '/items/1');
    await stopTree(server);
    warmCache[c.name] = dirSize(warmDirs.get(c.name)!);
    o.log(`${c.name}: warm compile cache ${warmCache[c.name]!.files} files, ${warmCache[c.name]!.kb} kB`);
  }
  const strace = o.strace && hasStrace();
  if (o.strace && !strace) o.log('--footprint-strace: strace is not installed, no syscall summary');
  const idle: IdleRound[] = [];
  const coldStarts: ColdStartRun[] = [];
  const straces: Record<string, string> = {};
  for (let round = 1; round <= o.rounds; round++) {
    const order = round % 2 === 1 ? [...contenders] : [...contenders].reverse();
    await waitQuiet(5);
    for (const c of order) {
      const r = await idleRound(c, warmDirs.get(c.name)!, round, strace && round === 1);
      idle.push(r.idle);
      if (r.strace !== undefined) straces[c.name] = r.strace;
      o.log(
        `round ${round}/${o.rounds} idle ${c.name}: ${r.idle.cpuPct.toFixed(2)} % of a core, ${Math.round(r.idle.wakeupsPerS)} wake-ups/s, ` +
          `PSS ${r.idle.pssMb.toFixed(1)} MB, noise ${Math.round(r.idle.noisePct)} %`,
      );
    }
    for (const cache of ['warm', 'cold'] as const) {
      for (const c of order) {
        const run = await coldStart(c, cache, warmDirs.get(c.name)!, round);
        coldStarts.push(run);
        o.log(
          `round ${round}/${o.rounds} cold start, ${cache} cache, ${c.name}: ${Math.round(run.ms)} ms, CPU ${Math.round(run.cpuMs)} ms, ` +
            `noise ${Math.round(run.noisePct)} %`,
        );
      }
    }
  }
  return {
    contenders: contenders.map((c) => ({ name: c.name, title: c.title })),
    idle,
    coldStarts,
    warmCache,
    ...(strace ? { strace: straces } : {}),
  };
}

/** The rounds to take medians over: the quiet ones when at least 3 are, otherwise all of them. */
export function usable<T extends { noisePct: number }>(list: readonly T[]): T[] {
  const quiet = list.filter((r) => r.noisePct <= FOOTPRINT_NOISY_PCT);
  return quiet.length >= 3 ? quiet : [...list];
}

/** Median of `f` over `list`. */
export const med = <T>(list: readonly T[], f: (t: T) => number): number => median(list.map(f));
