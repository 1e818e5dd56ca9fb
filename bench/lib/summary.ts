import type { Contender, Scenario } from './contenders.ts';
import type { Run } from './load.ts';
import type { ScrapeResult } from './scrape.ts';
import type { ColdStart, ExitTime, ProcessRss } from './startup.ts';
import { median, ratio } from './stats.ts';

/** Medians over the measured rounds of one contender on one scenario, and its ratios. */
export interface Row {
  contender: string;
  title: string;
  rounds: number;
  rps: number;
  /** Lowest and highest req/s over the rounds. */
  rpsRange: [number, number];
  p50Ms: number;
  p99Ms: number;
  cpuPer1k: number;
  errors: number;
  /** Highest noise (other processes' CPU on the machine) in its rounds, in % of one core. */
  maxForeignPct: number;
  rpsVsFastify: number;
  cpuVsFastify: number;
  rpsVsFloor: number;
  cpuVsFloor: number;
}

export function summarize(runs: readonly Run[], contenders: readonly Contender[], scenario: Scenario): Row[] {
  const measured = runs.filter((r) => r.scenario === scenario.name && r.round > 0);
  const base = contenders.map((c) => {
    const mine = measured.filter((r) => r.contender === c.name);
    return {
      contender: c.name,
      title: c.title,
      rounds: mine.length,
      rps: median(mine.map((r) => r.rps)),
      rpsRange: [Math.min(...mine.map((r) => r.rps)), Math.max(...mine.map((r) => r.rps))] as [number, number],
      p50Ms: median(mine.map((r) => r.p50Ms)),
      p99Ms: median(mine.map((r) => r.p99Ms)),
      cpuPer1k: median(mine.map((r) => r.cpuPer1k)),
      errors: mine.reduce((n, r) => n + r.errors, 0),
      maxForeignPct: Math.max(...mine.map((r) => r.foreignPct)),
    };
  });
  const fastify = base.find((r) => r.contender === 'fastify');
  const floor = base.find((r) => r.contender === 'floor');
  return base.map((r) => ({
    ...r,
    rpsVsFastify: ratio(r.rps, fastify?.rps),
    cpuVsFastify: ratio(r.cpuPer1k, fastify?.cpuPer1k),
    rpsVsFloor: ratio(r.rps, floor?.rps),
    cpuVsFloor: ratio(r.cpuPer1k, floor?.cpuPer1k),
  }));
}

export interface Extras {
  /** `clusterFromSource`: the cluster started from the .ts sources (`npm start`), for comparison. */
  coldStart?: { cluster: ColdStart; standalone: ColdStart; clusterFromSource?: ColdStart };
  rss?: { idle: Record<string, ProcessRss[]>; afterLoad: Record<string, ProcessRss[]> };
  scrape?: { cluster: ScrapeResult; standalone?: ScrapeResult };
  exit?: { standalone: ExitTime; cluster: ExitTime };
}

export interface Target {
  name: string;
  goal: string;
  value: number;
  unit: string;
  met: boolean;
}

/** The targets, from this run's numbers (ratios within the run). */
export function targets(rows: Record<string, Row[]>, extras: Extras): Target[] {
  const out: Target[] = [];
  const at = (scenario: string, name: string) => rows[scenario]?.find((r) => r.contender === name);
  const add = (name: string, goal: string, value: number | undefined, unit: string, met: (v: number) => boolean) => {
    if (value !== undefined && !Number.isNaN(value)) out.push({ name, goal, value, unit, met: met(value) });
  };
  for (const scenario of Object.keys(rows)) {
    const full = at(scenario, 'flotilla-full');
    const cluster = at(scenario, 'flotilla-cluster');
    add(`[${scenario}] flotilla full / Fastify, req/s`, '>= 1.10', full?.rpsVsFastify, '×', (v) => v >= 1.1);
    add(`[${scenario}] flotilla full / Fastify, CPU per request`, '<= 0.90', full?.cpuVsFastify, '×', (v) => v <= 0.9);
    add(`[${scenario}] flotilla lean / floor, req/s`, '>= 0.90', at(scenario, 'flotilla-lean')?.rpsVsFloor, '×', (v) => v >= 0.9);
    const clusterCpu = cluster && full ? Math.round((cluster.cpuPer1k / full.cpuPer1k) * 100) / 100 : undefined;
    add(`[${scenario}] cluster / standalone full, CPU per request`, '<= 1.10', clusterCpu, '×', (v) => v <= 1.1);
  }
  add('cluster cold start (median)', '<= 300 ms', extras.coldStart?.cluster.medianMs, 'ms', (v) => v <= 300);
  const flotillaRss = Object.entries(extras.rss?.idle ?? {})
    .filter(([name]) => name.startsWith('flotilla'))
    .flatMap(([, list]) => list.map((p) => p.mb));
  add('idle RSS, largest flotilla process', '<= 60 MB', flotillaRss.length ? Math.max(...flotillaRss) : undefined, 'MB', (v) => v <= 60);
  add('cluster /metrics scrape p99', '<= 50 ms', extras.scrape?.cluster.p99Ms, 'ms', (v) => v <= 50);
  add('standalone exit after SIGTERM, 100 idle keep-alive', '<= 500 ms', extras.exit?.standalone.exitMs, 'ms', (v) => v <= 500);
  add('cluster exit after SIGTERM, 100 idle keep-alive', '<= 500 ms', extras.exit?.cluster.exitMs, 'ms', (v) => v <= 500);
  return out;
}
