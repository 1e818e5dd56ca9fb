import { mkdirSync, writeFileSync } from 'node:fs';
import type { Scenario } from './contenders.ts';
import type { Run } from './load.ts';
import { SERIALIZERS, type SerializerCost } from './serializer-cost.ts';
import type { ProcessRss } from './startup.ts';
import { sig } from './stats.ts';
import { type BaselinePair, type ClusterFigures, type Extras, type Row, rssAboveFloor, type Target } from './summary.ts';

export interface Results {
  meta: Record<string, unknown> & { mode: string; date: string };
  parity: Record<string, string[]>;
  scenarios: Scenario[];
  rows: Record<string, Row[]>;
  runs: Run[];
  extras: Extras;
  tracing: Record<string, { rpsRatio: number; cpuRatio: number }>;
  /** Per scenario, the response-schema pairs that ran: `a` ÷ `b`, round by round. */
  responseSchemas?: Record<string, { a: string; b: string; rpsRatio: number; cpuRatio: number }[]>;
  /** Per scenario, each cluster contender ÷ flotilla full standalone, and how its CPU splits between its processes. */
  clusters?: Record<string, ClusterFigures[]>;
  /** `--baseline REV`: per scenario, current ÷ base (the same contender built from REV's src/), round by round. */
  baseline?: { rev: string; commit: string; pairs: Record<string, BaselinePair[]> };
  targets: Target[];
}

const n = (v: number | undefined, digits = 3) => (v === undefined || Number.isNaN(v) ? '–' : String(sig(v, digits)));
const int = (v: number) => Math.round(v).toLocaleString('en-US');
const kilo = (v: number) => `${(v / 1000).toFixed(1)}k`;
const x = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(2));

function throughputTable(rows: Row[]): string {
  const head =
    '| contender | req/s | rounds used: min–max | p50 ms | p99 ms | CPU s / 1k req | req/s vs Fastify | CPU vs Fastify | req/s vs floor | CPU vs floor | errors | noise % |\n' +
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n';
  return (
    head +
    rows
      .map(
        (r) =>
          `| ${r.title} | ${int(r.rps)} | ${r.roundsUsed}/${r.rounds}: ${kilo(r.rpsRange[0])}–${kilo(r.rpsRange[1])} | ${n(r.p50Ms)} | ${n(r.p99Ms)} | ${n(r.cpuPer1k)} | ${x(r.rpsVsFastify)} | ${x(r.cpuVsFastify)} | ` +
          `${x(r.rpsVsFloor)} | ${x(r.cpuVsFloor)} | ${r.errors} | ${Math.round(r.maxForeignPct)} |`,
      )
      .join('\n')
  );
}

const pct = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : `${Math.round(v)} %`);

function clusterTable(list: ClusterFigures[]): string {
  return [
    "| cluster (2 workers) | req/s vs standalone full | CPU per request vs standalone full | primary's share of the CPU | busiest worker's share of the workers' CPU | busiest worker's share of the connections (keep-alive) |",
    '|---|--:|--:|--:|--:|--:|',
    ...list.map(
      (c) =>
        `| ${c.contender} | ${x(c.rpsRatio)} | ${x(c.cpuRatio)} | ${pct(c.primarySharePct)} | ${pct(c.busiestWorkerPct)} | ${pct(c.busiestConnectionsPct)} |`,
    ),
  ].join('\n');
}

function rssLine(list: ProcessRss[]): string {
  return list.map((p) => `${p.role} ${p.mb.toFixed(1)} (${p.anonMb.toFixed(1)})`).join(', ');
}

/** The report as Markdown (also printed at the end of a run). */
export function markdown(r: Results): string {
  const m = r.meta;
  const out: string[] = [
    `# flotilla benchmark — ${m.mode} run`,
    '',
    `${m.date} · ${m['cpu']} × ${m['cores']} cores · Linux ${m['kernel']} · Node ${m['node']} · ${m['wrk']} · commit ${m['commit']}`,
    '',
    `Load: wrk, 1 thread, ${m['connections']} connections (keep-alive, or a new connection per request where the scenario says so), ${m['durationS']} s per run, warm-up ${m['warmupS']} s, ` +
      `${m['rounds']} alternating rounds, medians. Pinning: ${m['pinning']}. Logs: stdout → /dev/null for every contender. ` +
      `Machine busy before the start: ${m['busyAtStartPct']} % (other processes).`,
    '',
  ];
  for (const s of r.scenarios) {
    out.push(`## ${s.title}`, '', throughputTable(r.rows[s.name] ?? []), '');
    const clusters = r.clusters?.[s.name] ?? [];
    if (clusters.length > 0) out.push(clusterTable(clusters), '');
  }
  if (r.baseline !== undefined) {
    const b = r.baseline;
    out.push(
      `## Against the baseline (${b.rev}, ${b.commit})`,
      '',
      `Each \`<name>@base\` runs flotilla's \`src/\` as of ${b.commit} with the current bench servers and services, compiled alike; ` +
        'it runs beside its current contender, in turn before and after it. Current ÷ base, round by round (below 1 for CPU, above 1 for req/s: the current tree is faster):',
      '',
      '| scenario | contender | req/s current ÷ base | CPU per request current ÷ base |',
      '|---|---|--:|--:|',
    );
    for (const [s, list] of Object.entries(b.pairs))
      for (const p of list) out.push(`| ${s} | ${p.contender} | ${x(p.rpsRatio)} | ${x(p.cpuRatio)} |`);
    out.push('');
  }
  out.push('## Targets', '', '| target | goal | this run | met |', '|---|---|--:|---|');
  for (const t of r.targets)
    out.push(`| ${t.name} | ${t.goal} | ${n(t.value)} ${t.unit} | ${t.met === undefined ? '–' : t.met ? 'yes' : '**no**'} |`);
  out.push('');
  const e = r.extras;
  out.push('## Start, memory, metrics, shutdown', '');
  if (e.coldStart) {
    const c = e.coldStart;
    out.push(
      `- Cold start, spawn → every process listening (unpinned): cluster (primary + 2 workers, CLI) median ${n(c.cluster.medianMs)} ms, ` +
        `max ${n(c.cluster.maxMs)} ms over ${c.cluster.runsMs.length} runs; standalone median ${n(c.standalone.medianMs)} ms.`,
    );
    if (c.clusterFromSource) {
      out.push(
        `- Cold start of the cluster from the .ts sources (type stripping, as \`npm start\`): median ${n(c.clusterFromSource.medianMs)} ms.`,
      );
    }
    out.push(
      `- Exit after SIGTERM with no connection: cluster ${c.cluster.exitMs.map((v) => n(v)).join(' / ')} ms; standalone ${c.standalone.exitMs.map((v) => n(v)).join(' / ')} ms.`,
    );
  }
  if (e.exit) {
    out.push(
      `- Exit after SIGTERM with ${e.exit.standalone.connections} idle keep-alive connections: standalone ${n(e.exit.standalone.exitMs)} ms ` +
        `(exit code ${e.exit.standalone.code}); cluster (${e.exit.cluster.connections} connections) ${n(e.exit.cluster.exitMs)} ms (exit code ${e.exit.cluster.code}).`,
    );
  }
  if (e.scrape) {
    for (const [name, s] of Object.entries(e.scrape).filter(
      (entry): entry is [string, NonNullable<(typeof entry)[1]>] => entry[1] !== undefined,
    )) {
      out.push(
        `- /metrics scrape, ${name}: p50 ${n(s.p50Ms)} ms, p99 ${n(s.p99Ms)} ms, max ${n(s.maxMs)} ms over ${s.scrapes} scrapes ` +
          `(${s.routes} route label values, ${s.samples} samples, ${Math.round(s.bytes / 1024)} KiB).`,
      );
    }
  }
  if (e.metricsCost) out.push(...metricsCostLines(e.metricsCost));
  if (e.rss) {
    out.push('', '| VmRSS (RssAnon), MB | idle, after start | idle, after the load |', '|---|---|---|');
    for (const [name, list] of Object.entries(e.rss.idle))
      out.push(`| ${name} | ${rssLine(list)} | ${rssLine(e.rss.afterLoad[name] ?? [])} |`);
    const above = rssAboveFloor(e);
    if (above !== undefined)
      out.push('', `Idle, after start: the largest flotilla-cluster worker is ${n(above)} MB above the floor server (VmRSS).`);
  }
  out.push('');
  const pairs = Object.entries(r.responseSchemas ?? {}).filter(([, list]) => list.length > 0);
  if (pairs.length > 0) {
    out.push('## Response schemas', '', 'Over HTTP, round by round (a ÷ b):', '');
    for (const [s, list] of pairs)
      for (const p of list) out.push(`- ${s}: ${p.a} ÷ ${p.b}: req/s ${x(p.rpsRatio)}, CPU per request ${x(p.cpuRatio)}`);
    out.push('');
  }
  if (e.serializer) out.push(...serializerCostLines(e.serializer), '');
  if (Object.keys(r.tracing).length > 0) {
    out.push('## Tracing overhead', '', 'flotilla full (default tracer) ÷ flotilla full with `app.setTracer(noopTracer)`:', '');
    for (const [s, t] of Object.entries(r.tracing)) out.push(`- ${s}: req/s ${x(t.rpsRatio)}, CPU per request ${x(t.cpuRatio)}`);
    out.push('');
  }
  const issues = Object.entries(r.parity).filter(([, list]) => list.length > 0);
  out.push(
    '## Parity check',
    '',
    issues.length === 0
      ? 'Every contender returned the same bodies, problem responses for errors and (except the floor) CORS, Vary and X-Request-Id headers.'
      : issues.map(([c, list]) => `- ${c}: ${list.join('; ')}`).join('\n'),
    '',
  );
  if (Array.isArray(m['notes'])) out.push('## Notes', '', ...(m['notes'] as string[]).map((note) => `- ${note}`), '');
  return out.join('\n');
}

/** The metrics-cost measurements as Markdown list items (also what `--metrics-only` prints). */
export function metricsCostLines(m: NonNullable<Extras['metricsCost']>): string[] {
  const { scrape: s, snapshot: p } = m;
  const t = (x: { p50Ms: number; p99Ms: number; maxMs: number; count: number }) =>
    `p50 ${n(x.p50Ms)} ms, p99 ${n(x.p99Ms)} ms, max ${n(x.maxMs)} ms over ${x.count} scrapes`;
  return [
    `- /metrics scrape, cluster of 2 workers × 50 routes, both workers healthy: ${t(s.healthy)} (${s.samples[0]} samples, ${Math.round(s.bytes[0] / 1024)} KiB).`,
    `- /metrics scrape, the same cluster with one worker stuck in \`while (true) {}\` (watchdog off, its snapshot ${Math.round(s.stuckForMs)} ms old or more, ` +
      `flotilla_scrape_workers_stale ${s.stale}, _missing ${s.missing}): ${t(s.stuck)} (${s.samples[1]} samples).`,
    `- One metrics push in a worker with 50 routes (in-process, \`toMetricFamilies(await registry.getMetricsAsJSON())\` + \`JSON.stringify\` of the message, ` +
      `${p.families} families, ${p.series} series, ${Math.round(p.bytes / 1024)} KiB): ${n(p.cpuUs)} µs of CPU per push (mean over ${p.iterations}; ` +
      `wall p50 ${n(p.wallP50Us)} µs, p99 ${n(p.wallP99Us)} µs) = ${n(p.corePct, 2)} % of one core at the default 1 s interval; ` +
      `median per step: getMetricsAsJSON ${n(p.steps.getMetricsAsJSON)} µs, toMetricFamilies ${n(p.steps.toMetricFamilies)} µs, JSON.stringify ${n(p.steps.stringify)} µs.`,
  ];
}

/** The serializer comparison as a Markdown section (also what `--serializer-only` prints). */
export function serializerCostLines(s: SerializerCost): string[] {
  const head = SERIALIZERS.map((name) => `${name} µs (× JSON.stringify)`);
  const out = [
    "## Serializing the paginated route's body (in-process)",
    '',
    `The \`Page<T>\` envelope of the list route, ${s.rounds} alternating rounds (${s.callsPerRound} calls per round for 20 items), medians; ` +
      'fast-json-stringify compiled from the same schema with its defaults, as Fastify compiles a response schema; check + fast-json-stringify: ' +
      "an ajv check of the value first (flotilla without its shortcut); flotilla: a `paginated()` route's serializer (when the value " +
      'fits exactly, `JSON.stringify`; else the fit check, then fast-json-stringify). ' +
      'With undeclared fields, flotilla and fast-json-stringify leave them out; JSON.stringify sends them (the reference cost only).',
    '',
    `| items | undeclared fields | ${head.join(' | ')} | bytes (JSON.stringify / schema) |`,
    `|--:|---|${SERIALIZERS.map(() => '--:').join('|')}|--:|`,
  ];
  for (const c of s.cases) {
    const cells = SERIALIZERS.map((name) => `${(c.ns[name] / 1000).toFixed(2)} (${c.vsStringify[name].toFixed(2)})`);
    out.push(
      `| ${c.limit} | ${c.undeclared ? '2 per item' : 'none'} | ${cells.join(' | ')} | ${c.bytes['JSON.stringify']} / ${c.bytes.flotilla} |`,
    );
  }
  return out;
}

/** Writes `<dir>/<name>.md` and `<dir>/<name>.json`. */
export function writeReport(dir: string, name: string, results: Results): string {
  mkdirSync(dir, { recursive: true });
  const md = markdown(results);
  writeFileSync(`${dir}/${name}.md`, md);
  writeFileSync(`${dir}/${name}.json`, `${JSON.stringify(results, null, 2)}\n`);
  return md;
}
