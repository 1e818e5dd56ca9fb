import type { Contender, Scenario } from './contenders.ts';
import type { Run } from './load.ts';
import type { SnapshotCost, StuckScrapeResult } from './metrics-cost.ts';
import type { ScrapeResult } from './scrape.ts';
import type { SerializerCost } from './serializer-cost.ts';
import type { ColdStart, ExitTime, ProcessRss } from './startup.ts';
import { median } from './stats.ts';

/** A run with more CPU of other processes than this (% of one core) is left out of the medians when 3 quieter ones exist. */
export const NOISY_PCT = 10;

/** Medians over the measured rounds of one contender on one scenario, and its ratios. */
export interface Row {
  contender: string;
  title: string;
  /** Rounds measured, and those the medians are taken over (the quiet ones, when there are at least 3). */
  rounds: number;
  roundsUsed: number;
  rps: number;
  /** Lowest and highest req/s over the rounds. */
  rpsRange: [number, number];
  p50Ms: number;
  p99Ms: number;
  cpuPer1k: number;
  errors: number;
  /** Highest noise (other processes' CPU on the machine) in the rounds used, in % of one core. */
  maxForeignPct: number;
  rpsVsFastify: number;
  cpuVsFastify: number;
  rpsVsFloor: number;
  cpuVsFloor: number;
}

export function summarize(runs: readonly Run[], contenders: readonly Contender[], scenario: Scenario): Row[] {
  const measured = runs.filter((r) => r.scenario === scenario.name && r.round > 0);
  const base = contenders.map((c) => {
    const all = measured.filter((r) => r.contender === c.name);
    const quiet = all.filter((r) => r.foreignPct <= NOISY_PCT);
    const mine = quiet.length >= 3 ? quiet : all;
    return {
      contender: c.name,
      title: c.title,
      rounds: all.length,
      roundsUsed: mine.length,
      rps: median(mine.map((r) => r.rps)),
      rpsRange: [Math.min(...mine.map((r) => r.rps)), Math.max(...mine.map((r) => r.rps))] as [number, number],
      p50Ms: median(mine.map((r) => r.p50Ms)),
      p99Ms: median(mine.map((r) => r.p99Ms)),
      cpuPer1k: median(mine.map((r) => r.cpuPer1k)),
      errors: all.reduce((n, r) => n + r.errors, 0),
      maxForeignPct: Math.max(...mine.map((r) => r.foreignPct)),
    };
  });
  const vs = (name: string, ref: string, metric: 'rps' | 'cpuPer1k') => pairedRatio(runs, scenario.name, name, ref, metric);
  return base.map((r) => ({
    ...r,
    rpsVsFastify: vs(r.contender, 'fastify', 'rps'),
    cpuVsFastify: vs(r.contender, 'fastify', 'cpuPer1k'),
    rpsVsFloor: vs(r.contender, 'floor', 'rps'),
    cpuVsFloor: vs(r.contender, 'floor', 'cpuPer1k'),
  }));
}

/**
 * `a`'s metric ÷ `b`'s, taken round by round (the two ran seconds apart, so a
 * slow spell of the host hits both) and the median of those ratios; over the
 * rounds where both runs were quiet when there are 3 such rounds. 2 decimals.
 */
export function pairedRatio(runs: readonly Run[], scenario: string, a: string, b: string, metric: 'rps' | 'cpuPer1k'): number {
  const mine = (name: string) =>
    new Map(runs.filter((r) => r.scenario === scenario && r.round > 0 && r.contender === name).map((r) => [r.round, r]));
  const ref = mine(b);
  const pairs = [...mine(a)].flatMap(([round, run]) => (ref.has(round) ? [[run, ref.get(round)!] as const] : []));
  if (pairs.length === 0) return Number.NaN;
  const quiet = pairs.filter(([x, y]) => x.foreignPct <= NOISY_PCT && y.foreignPct <= NOISY_PCT);
  const used = quiet.length >= 3 ? quiet : pairs;
  return Math.round(median(used.map(([x, y]) => x[metric] / y[metric])) * 100) / 100;
}

export interface Extras {
  /** `clusterFromSource`: the cluster started from the .ts sources (`npm start`), for comparison. */
  coldStart?: { cluster: ColdStart; standalone: ColdStart; clusterFromSource?: ColdStart };
  rss?: { idle: Record<string, ProcessRss[]>; afterLoad: Record<string, ProcessRss[]> };
  scrape?: { cluster: ScrapeResult; standalone?: ScrapeResult };
  exit?: { standalone: ExitTime; cluster: ExitTime };
  /** The primary's scrape with 2 workers × 50 routes, healthy then one worker stuck; one metrics push's cost in a worker. */
  metricsCost?: { scrape: StuckScrapeResult; snapshot: SnapshotCost };
  /** The paginated route's body serialized in-process: JSON.stringify, fast-json-stringify, flotilla's serializer. */
  serializer?: SerializerCost;
}

export interface Target {
  name: string;
  goal: string;
  value: number;
  unit: string;
  met: boolean;
}

/** The targets, from this run's numbers (ratios within the run, round by round). */
export function targets(runs: readonly Run[], rows: Record<string, Row[]>, extras: Extras): Target[] {
  const out: Target[] = [];
  const at = (scenario: string, name: string) => rows[scenario]?.find((r) => r.contender === name);
  const add = (name: string, goal: string, value: number | undefined, unit: string, met: (v: number) => boolean) => {
    if (value !== undefined && !Number.isNaN(value)) out.push({ name, goal, value, unit, met: met(value) });
  };
  for (const scenario of Object.keys(rows)) {
    const full = at(scenario, 'flotilla-full');
    add(`[${scenario}] flotilla full / Fastify, req/s`, '>= 1.10', full?.rpsVsFastify, '×', (v) => v >= 1.1);
    add(`[${scenario}] flotilla full / Fastify, CPU per request`, '<= 0.90', full?.cpuVsFastify, '×', (v) => v <= 0.9);
    add(`[${scenario}] flotilla lean / floor, req/s`, '>= 0.90', at(scenario, 'flotilla-lean')?.rpsVsFloor, '×', (v) => v >= 0.9);
    const clusterCpu = pairedRatio(runs, scenario, 'flotilla-cluster', 'flotilla-full', 'cpuPer1k');
    add(`[${scenario}] cluster / standalone full, CPU per request`, '<= 1.10', clusterCpu, '×', (v) => v <= 1.1);
  }
  add('cluster cold start (median)', '<= 300 ms', extras.coldStart?.cluster.medianMs, 'ms', (v) => v <= 300);
  const flotillaRss = Object.entries(extras.rss?.idle ?? {})
    .filter(([name]) => name.startsWith('flotilla'))
    .flatMap(([, list]) => list.map((p) => p.mb));
  add('idle RSS, largest flotilla process', '<= 60 MB', flotillaRss.length ? Math.max(...flotillaRss) : undefined, 'MB', (v) => v <= 60);
  add('cluster /metrics scrape p99', '<= 50 ms', extras.scrape?.cluster.p99Ms, 'ms', (v) => v <= 50);
  const stuckRun = extras.metricsCost?.scrape;
  add('cluster /metrics scrape p99, 50 routes, workers healthy', '<= 5 ms', stuckRun?.healthy.p99Ms, 'ms', (v) => v <= 5);
  add('cluster /metrics scrape p99, 50 routes, one worker stuck', '<= 5 ms', stuckRun?.stuck.p99Ms, 'ms', (v) => v <= 5);
  add('standalone exit after SIGTERM, 100 idle keep-alive', '<= 500 ms', extras.exit?.standalone.exitMs, 'ms', (v) => v <= 500);
  add('cluster exit after SIGTERM, 100 idle keep-alive', '<= 500 ms', extras.exit?.cluster.exitMs, 'ms', (v) => v <= 500);
  return out;
}
