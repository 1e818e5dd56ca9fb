import { mkdirSync, writeFileSync } from 'node:fs';
import type { CompareResults, CompareRow } from './cluster-compare.ts';
import { sig } from './stats.ts';
import { NOISY_PCT } from './summary.ts';

const n = (v: number | undefined, digits = 3) => (v === undefined || Number.isNaN(v) ? '–' : String(sig(v, digits)));
const int = (v: number) => (Number.isNaN(v) ? '–' : Math.round(v).toLocaleString('en-US'));
const kilo = (v: number) => `${(v / 1000).toFixed(1)}k`;
const x = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(2));
const pct = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : `${Math.round(v)} %`);

/** Every case side by side: req/s, CPU per request, p99 and non-2xx of each contender. */
function overview(r: CompareResults): string[] {
  const cell = (row: CompareRow | undefined) =>
    row === undefined ? '–' : `${int(row.rps)} · ${n(row.cpuPer1k)} · ${n(row.p99Ms)} · ${row.non2xx}`;
  return [
    `| case | ${r.contenders.map((c) => c.name).join(' | ')} |`,
    `|---|${r.contenders.map(() => '--:').join('|')}|`,
    ...r.cases.map(
      (c) => `| ${c.name} | ${r.contenders.map((k) => cell(r.rows[c.name]?.find((row) => row.contender === k.name))).join(' | ')} |`,
    ),
  ];
}

/** Whether other processes took more than `NOISY_PCT` % of a core during the measured runs kept. */
function noiseLine(r: CompareResults): string {
  const rows = Object.values(r.rows).flat();
  const noisy = rows.filter((row) => row.maxForeignPct > NOISY_PCT);
  return noisy.length === 0
    ? `Noise: every run kept below ${NOISY_PCT} % of a core of other processes' CPU.`
    : `**Provisional**: in ${noisy.length} of ${rows.length} rows, a run kept had more than ${NOISY_PCT} % of a core taken by other ` +
        `processes (up to ${Math.round(Math.max(...noisy.map((row) => row.maxForeignPct)))} %, \`noise %\` column): those rows' req/s and p99 ` +
        "suffer most; CPU per request is the contender's own counters and holds up best.";
}

function caseTable(rows: CompareRow[]): string[] {
  return [
    '| contender | req/s | rounds used: min–max | CPU s / 1k req (whole tree) | p50 ms | p99 ms | non-2xx | socket errors | req/s ÷ flotilla | CPU ÷ flotilla | primary / main share of the CPU | busiest worker’s share of the workers’ CPU | busiest worker’s share of the connections | noise % |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows.map(
      (r) =>
        `| ${r.title} | ${int(r.rps)} | ${r.roundsUsed}/${r.rounds}: ${kilo(r.rpsRange[0])}–${kilo(r.rpsRange[1])} | ${n(r.cpuPer1k)} | ` +
        `${n(r.p50Ms)} | ${n(r.p99Ms)} | ${r.non2xx} | ${r.socketErrors} | ${x(r.rpsVsFlotilla)} | ${x(r.cpuVsFlotilla)} | ` +
        `${pct(r.primarySharePct)} | ${pct(r.busiestWorkerPct)} | ${pct(r.busiestConnectionsPct)} | ${Math.round(r.maxForeignPct)} |`,
    ),
  ];
}

/** The report as Markdown (also printed at the end of the run). */
export function clusterCompareMarkdown(r: CompareResults): string {
  const m = r.meta;
  const out: string[] = [
    '# Cluster comparison — flotilla, Fastify in node:cluster, Platformatic Watt (2 workers each)',
    '',
    `${m.date} · ${m['cpu']} × ${m['cores']} cores · Linux ${m['kernel']} · Node ${m['node']} · ${m['wrk']} · commit ${m['commit']} · ${m['servers']}`,
    '',
    `Load: wrk, 1 thread, \`GET /items?page=3&limit=20\`, ${m['durationS']} s per run, warm-up ${m['warmupS']} s, ${m['rounds']} alternating rounds ` +
      `(the contenders' order turns by one each round), medians. Pinning: ${m['pinning']}. Request log line off for all three; ` +
      `stdout → /dev/null. Machine busy before the start: ${m['busyAtStartPct']} % (other processes).`,
    '',
    noiseLine(r),
    '',
    '## Contenders',
    '',
    '| contender | what | versions | listening sockets on the port (who holds them) |',
    '|---|---|---|---|',
    ...r.contenders.map(
      (c) =>
        `| ${c.name} | ${c.title} | ${Object.entries(c.versions)
          .map(([p, v]) => `${p} ${v}`)
          .join(', ')} | ${c.accepts} |`,
    ),
    '',
    '## Side by side',
    '',
    'Each cell: req/s · CPU s per 1 000 requests (whole process tree) · p99 ms · non-2xx responses (medians; non-2xx summed over the rounds).',
    '',
    ...overview(r),
    '',
  ];
  for (const c of r.cases) out.push(`## ${c.title}`, '', ...caseTable(r.rows[c.name] ?? []), '');
  const issues = Object.entries(r.parity).filter(([, list]) => list.length > 0);
  out.push(
    '## Parity check',
    '',
    issues.length === 0
      ? 'Every contender returned the same bodies, problem responses for errors and the CORS, Vary and X-Request-Id headers.'
      : issues.map(([c, list]) => `- ${c}: ${list.join('; ')}`).join('\n'),
    '',
  );
  if (Array.isArray(m['notes'])) out.push('## Notes', '', ...(m['notes'] as string[]).map((note) => `- ${note}`), '');
  return out.join('\n');
}

/** Writes `<dir>/<name>.md` and `<dir>/<name>.json`; returns the Markdown. */
export function writeClusterCompareReport(dir: string, name: string, results: CompareResults): string {
  mkdirSync(dir, { recursive: true });
  const md = clusterCompareMarkdown(results);
  writeFileSync(`${dir}/${name}.md`, md);
  writeFileSync(`${dir}/${name}.json`, `${JSON.stringify(results, null, 2)}\n`);
  return md;
}
