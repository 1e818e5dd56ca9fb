import { mkdirSync, writeFileSync } from 'node:fs';
import { type ColdStartRun, FOOTPRINT_NOISY_PCT, type FootprintResults, IDLE_S, type IdleRound, med, usable } from './footprint.ts';
import { sig } from './stats.ts';
import type { Target } from './summary.ts';

const FLOTILLA = 'flotilla-cluster';
const FASTIFY = 'fastify-cluster';

const n = (v: number | undefined, digits = 3) => (v === undefined || Number.isNaN(v) ? '–' : String(sig(v, digits)));
const mb = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(1));
/** CPU in % of a core: a tick over 10 s is 0.1 %. */
const cpu = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(2));
const rate = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(1));
const range = (values: number[]) => `${n(Math.min(...values))}–${n(Math.max(...values))}`;

/**
 * Median of the round-by-round ratios a ÷ b of the cold starts with `cache` (the two sides started
 * seconds apart): of the time to the first 200, or of the tree's CPU time by then (`cpu`).
 */
function coldRatio(r: FootprintResults, cache: 'warm' | 'cold', cpu = false): number {
  const runs = usable(r.coldStarts.filter((c) => c.cache === cache));
  const of = (run: ColdStartRun) => (cpu ? run.cpuMs : run.ms);
  const ratios = [...new Set(runs.map((c) => c.round))].flatMap((round) => {
    const a = runs.find((c) => c.round === round && c.contender === FLOTILLA);
    const b = runs.find((c) => c.round === round && c.contender === FASTIFY);
    return a && b ? [of(a) / of(b)] : [];
  });
  return med(ratios, (x) => x);
}

const cpuOf = (run: ColdStartRun) => run.cpuMs;

const idleOf = (r: FootprintResults, name: string) => usable(r.idle.filter((i) => i.contender === name));

/** The targets from this run. */
export function footprintTargets(r: FootprintResults): Target[] {
  const cpu = med(idleOf(r, FLOTILLA), (i) => i.cpuPct);
  const pssAbove = med(idleOf(r, FLOTILLA), (i) => i.pssMb) - med(idleOf(r, FASTIFY), (i) => i.pssMb);
  const warm = coldRatio(r, 'warm');
  const cold = coldRatio(r, 'cold');
  return [
    { name: 'idle CPU of the 2-worker flotilla tree', goal: '≤ 0.5 % of a core', value: cpu, unit: '%', met: cpu <= 0.5 },
    { name: 'idle PSS of the flotilla tree above Fastify’s', goal: '≤ +35 MB', value: pssAbove, unit: 'MB', met: pssAbove <= 35 },
    { name: 'cold start, warm compile cache, flotilla ÷ Fastify', goal: '≤ 1.10', value: warm, unit: '×', met: warm <= 1.1 },
    { name: 'cold start, cold compile cache, flotilla ÷ Fastify', goal: '≤ 1.10', value: cold, unit: '×', met: cold <= 1.1 },
    {
      name: 'CPU time to the first 200, warm compile cache, flotilla ÷ Fastify',
      goal: 'reported',
      value: coldRatio(r, 'warm', true),
      unit: '×',
      met: undefined,
    },
    {
      name: 'CPU time to the first 200, cold compile cache, flotilla ÷ Fastify',
      goal: 'reported',
      value: coldRatio(r, 'cold', true),
      unit: '×',
      met: undefined,
    },
  ];
}

/** Per-process and per-thread medians over the usable rounds of one contender. */
function detailTable(rounds: IdleRound[]): string[] {
  const lines = ['| process / thread | threads | CPU % of a core | wake-ups/s | PSS MB | private MB |', '|---|--:|--:|--:|--:|--:|'];
  for (const p of rounds[0]?.processes ?? []) {
    const mine = rounds.flatMap((r) => r.processes.filter((q) => q.label === p.label));
    lines.push(
      `| **${p.label}** | ${n(med(mine, (q) => q.threads.reduce((s, t) => s + t.count, 0)))} | ${cpu(med(mine, (q) => q.cpuPct))} | ` +
        `${rate(med(mine, (q) => q.wakeupsPerS))} | ${mb(med(mine, (q) => q.pssMb))} | ${mb(med(mine, (q) => q.privateMb))} |`,
    );
    for (const t of p.threads) {
      const kinds = mine.flatMap((q) => q.threads.filter((u) => u.kind === t.kind));
      lines.push(
        `| · ${t.kind} | ${n(med(kinds, (u) => u.count))} | ${cpu(med(kinds, (u) => u.cpuPct))} | ${rate(med(kinds, (u) => u.wakeupsPerS))} | – | – |`,
      );
    }
  }
  return lines;
}

/** The report as Markdown (also printed at the end of the run). */
export function footprintMarkdown(r: FootprintResults): string {
  const m = r.meta;
  const noiseAll = [...r.idle, ...r.coldStarts].map((x) => x.noisePct);
  const noisy = noiseAll.filter((x) => x > FOOTPRINT_NOISY_PCT).length;
  const out: string[] = [
    '# flotilla footprint — an idle pod',
    '',
    `${m.date} · ${m['cpu']} × ${m['cores']} cores · Linux ${m['kernel']} · Node ${m['node']} · commit ${m['commit']} · ${m['servers']}`,
    '',
    `${m['rounds']} alternating rounds, medians. Each round, each contender: started (unpinned), ${m['warmupRequests']} requests, ` +
      `${Number(m['settleMs']) / 1000} s settle, then ${IDLE_S} s with no traffic; then a cold start with a warm compile cache and one ` +
      `with a cold one. Machine busy before the start: ${m['busyAtStartPct']} % (other processes).`,
    '',
    noisy === 0
      ? `Noise: every window below ${FOOTPRINT_NOISY_PCT} % of a core of other processes' CPU.`
      : `**Provisional**: ${noisy} of ${noiseAll.length} windows had more than ${FOOTPRINT_NOISY_PCT} % of a core taken by other processes ` +
        `(median ${Math.round(med(noiseAll, (x) => x))} %, max ${Math.round(Math.max(...noiseAll))} %): idle CPU and wake-ups ` +
        'are the tree’s own counters and hold up best; cold starts suffer most.',
    '',
    '## Targets',
    '',
    '| target | goal | this run | met |',
    '|---|---|--:|---|',
    ...footprintTargets(r).map(
      (t) => `| ${t.name} | ${t.goal} | ${n(t.value)} ${t.unit} | ${t.met === undefined ? '–' : t.met ? 'yes' : '**no**'} |`,
    ),
    '',
    `## Idle, ${IDLE_S} s without traffic`,
    '',
    '| contender | CPU % of a core | rounds: min–max | wake-ups/s | PSS MB | private MB | noise % (median, max) |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const c of r.contenders) {
    const all = r.idle.filter((i) => i.contender === c.name);
    const used = usable(all);
    out.push(
      `| ${c.title} | ${cpu(med(used, (i) => i.cpuPct))} | ${used.length}/${all.length}: ${range(used.map((i) => i.cpuPct))} | ` +
        `${rate(med(used, (i) => i.wakeupsPerS))} | ${mb(med(used, (i) => i.pssMb))} | ${mb(med(used, (i) => i.privateMb))} | ` +
        `${Math.round(med(all, (i) => i.noisePct))}, ${Math.round(Math.max(...all.map((i) => i.noisePct)))} |`,
    );
  }
  out.push(
    '',
    '## Cold start, spawn → the first 200 on `GET /items/1`',
    '',
    '| contender | warm cache ms | min–max | CPU ms | cold cache ms | min–max | CPU ms | noise % (median, max) |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const c of r.contenders) {
    const of = (cache: 'warm' | 'cold') => usable(r.coldStarts.filter((s) => s.contender === c.name && s.cache === cache));
    const all = r.coldStarts.filter((s) => s.contender === c.name);
    out.push(
      `| ${c.title} | ${n(med(of('warm'), (s) => s.ms))} | ${range(of('warm').map((s) => s.ms))} | ${n(med(of('warm'), cpuOf))} | ` +
        `${n(med(of('cold'), (s) => s.ms))} | ${range(of('cold').map((s) => s.ms))} | ${n(med(of('cold'), cpuOf))} | ${Math.round(med(all, (s) => s.noisePct))}, ${Math.round(Math.max(...all.map((s) => s.noisePct)))} |`,
    );
  }
  const caches = Object.entries(r.warmCache).map(([name, w]) => `${name} ${w.files} files, ${w.kb} kB`);
  out.push(
    '',
    `Warm compile cache after its priming start: ${caches.join('; ')}.`,
    '',
    '## Per process and thread (idle window, medians)',
    '',
  );
  for (const c of r.contenders) out.push(`### ${c.title}`, '', ...detailTable(usable(r.idle.filter((i) => i.contender === c.name))), '');
  for (const [name, text] of Object.entries(r.strace ?? {})) {
    out.push(`## strace -c -f, worker 1 of ${name}, ${IDLE_S} s idle (round 1, after the measured window)`, '', '```', text, '```', '');
  }
  out.push('## Notes', '', ...(m['notes'] as string[]).map((line) => `- ${line}`), '');
  return out.join('\n');
}

/** Writes `<dir>/<name>.md` and `.json`; returns the Markdown. */
export function writeFootprintReport(dir: string, name: string, results: FootprintResults): string {
  mkdirSync(dir, { recursive: true });
  const md = footprintMarkdown(results);
  writeFileSync(`${dir}/${name}.md`, md);
  writeFileSync(`${dir}/${name}.json`, `${JSON.stringify({ ...results, targets: footprintTargets(results) }, null, 2)}\n`);
  return md;
}
