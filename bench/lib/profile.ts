import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Contender, Scenario } from './contenders.ts';
import { loadRun } from './load.ts';
import { freePort, ROOT, runtime, ServerProcess } from './server-process.ts';

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(program)']);

/** A frame's URL relative to the repository (or to the compiled copy). */
function rel(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(runtime.root, '')
    .replace(ROOT, '');
}

/** `functionName file:line`, paths shortened to the package or to the repository. */
function frameKey(f: CpuProfile['nodes'][number]['callFrame']): string {
  const url = rel(f.url);
  const short = url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : url;
  return `${f.functionName || '(anonymous)'}${short ? ` ${short}:${f.lineNumber + 1}` : ''}`;
}

/** The package (`pino`), flotilla source file (`src/app/core/ctx.ts`), node internal module, or special node. */
function areaOf(f: CpuProfile['nodes'][number]['callFrame']): string {
  const url = rel(f.url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url || f.functionName;
}

/** Self and inclusive time per function and self time per area, over every profile in `dir`. */
function analyse(dir: string): { total: number; self: Map<string, number>; incl: Map<string, number>; areas: Map<string, number> } {
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(p.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
    p.samples.forEach((id, i) => {
      const dt = p.timeDeltas[i + 1] ?? 0;
      const node = byId.get(id)!;
      if (IDLE.has(node.callFrame.functionName)) return;
      total += dt;
      add(self, frameKey(node.callFrame), dt);
      add(areas, areaOf(node.callFrame), dt);
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const key = frameKey(byId.get(at)!.callFrame);
        if (!seen.has(key)) add(incl, key, dt);
        seen.add(key);
      }
    });
  }
  return { total, self, incl, areas };
}

function top(m: Map<string, number>, total: number, count: number, perRequestUs: number, filter = (_k: string) => true): string[] {
  return [...m]
    .filter(([k]) => filter(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)} %  ${((v / total) * perRequestUs).toFixed(2).padStart(6)} µs  ${k}`);
}

/** Runs one contender under `--cpu-prof` for a load run and returns a text summary of where its CPU went. */
export async function profileContender(
  c: Contender,
  scenario: Scenario,
  durationS: number,
  connections: number,
  pin: boolean,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-prof-'));
  try {
    const env = { METRICS_PORT: String(await freePort()) };
    const launch = { ...c, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`], ...(pin && c.pinned ? { core: 0 } : {}) };
    const server = await ServerProcess.start(launch, await freePort(), env);
    const settings = { connections, durationS, wrkCore: pin ? 1 : undefined };
    await loadRun(server, scenario, { ...settings, durationS: 2 });
    const run = await loadRun(server, scenario, settings);
    await server.stop();
    const { total, self, incl, areas } = analyse(dir);
    const perRequestUs = (run.cpuS * 1e6) / run.requests;
    return [
      `${c.name}, ${scenario.title}: ${Math.round(run.rps)} req/s, ${perRequestUs.toFixed(1)} µs CPU per request (profile: ${(total / 1e6).toFixed(1)} s busy, startup and warm-up included)`,
      '',
      'Self time by area (package, flotilla file, node internal):',
      ...top(areas, total, 20, perRequestUs),
      '',
      'Hottest functions, self time:',
      ...top(self, total, 30, perRequestUs),
      '',
      'flotilla functions, inclusive time:',
      ...top(incl, total, 25, perRequestUs, (k) => / (src|bench)\//.test(k)),
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
