import { type Contender, runsIn, type Scenario } from './contenders.ts';
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
  /** Cluster rows: the primary's share of the cluster's CPU during the runs, in % (median over the rounds used). */
  primarySharePct?: number;
  /** Cluster rows: the busiest worker's share of the workers' CPU, in % (median; 50 % with 2 workers is an even spread). */
  busiestWorkerPct?: number;
  /** Cluster rows, keep-alive: the busiest worker's share of wrk's connections halfway through a run, in % (median). */
  busiestConnectionsPct?: number;
}

export function summarize(runs: readonly Run[], contenders: readonly Contender[], scenario: Scenario): Row[] {
  const measured = runs.filter((r) => r.scenario === scenario.name && r.round > 0);
  const base = contenders
    .filter((c) => runsIn(c, scenario))
    .map((c) => {
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
        ...clusterSplit(mine),
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

/** The primary's share of a cluster's CPU and the busiest worker's share of the workers', medians over `runs` (in %). */
function clusterSplit(runs: readonly Run[]): Pick<Row, 'primarySharePct' | 'busiestWorkerPct' | 'busiestConnectionsPct'> {
  const split = runs.flatMap((r) => (r.split === undefined || r.cpuS <= 0 ? [] : [{ ...r.split, cpuS: r.cpuS }]));
  if (split.length === 0) return {};
  const busiest = split.flatMap((s) => {
    const workers = s.workers.reduce((a, b) => a + b, 0);
    return workers > 0 ? [(Math.max(...s.workers) / workers) * 100] : [];
  });
  const connections = split.flatMap((s) => {
    const all = (s.connections ?? []).reduce((a, b) => a + b, 0);
    return all > 0 ? [(Math.max(...s.connections!) / all) * 100] : [];
  });
  return {
    primarySharePct: median(split.map((s) => (s.primary / s.cpuS) * 100)),
    ...(busiest.length === 0 ? {} : { busiestWorkerPct: median(busiest) }),
    ...(connections.length === 0 ? {} : { busiestConnectionsPct: median(connections) }),
  };
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
  /** Undefined for a figure reported beside a target, with no goal of its own. */
  met: boolean | undefined;
}

/** The cluster contenders, each compared with `flotilla-full` (the same App and defaults, standalone). */
export const CLUSTERS = ['flotilla-cluster', 'flotilla-cluster-primary'] as const;

/** The targets, from this run's numbers (ratios within the run, round by round). */
export function targets(runs: readonly Run[], rows: Record<string, Row[]>, scenarios: readonly Scenario[], extras: Extras): Target[] {
  const out: Target[] = [];
  const at = (scenario: string, name: string) => rows[scenario]?.find((r) => r.contender === name);
  const add = (name: string, goal: string, value: number | undefined, unit: string, met?: (v: number) => boolean) => {
    if (value !== undefined && !Number.isNaN(value)) out.push({ name, goal, value, unit, met: met?.(value) });
  };
  for (const { name: scenario, keepAlive, feature } of scenarios) {
    if (feature === 'compression') {
      const on = 'flotilla-full';
      add(
        `[${scenario}] compression on / off, CPU per request`,
        'reported',
        pairedRatio(runs, scenario, on, 'flotilla-no-compression', 'cpuPer1k'),
        '×',
      );
      add(`[${scenario}] compression on / off, req/s`, 'reported', pairedRatio(runs, scenario, on, 'flotilla-no-compression', 'rps'), '×');
      add(`[${scenario}] flotilla / Fastify with @fastify/compress, CPU per request`, 'reported', at(scenario, on)?.cpuVsFastify, '×');
      continue;
    }
    const full = at(scenario, 'flotilla-full');
    const clusterCpu = pairedRatio(runs, scenario, 'flotilla-cluster', 'flotilla-full', 'cpuPer1k');
    if (keepAlive) {
      add(`[${scenario}] flotilla defaults (full) / Fastify same features, req/s`, '>= 1.30', full?.rpsVsFastify, '×', (v) => v >= 1.3);
      add(
        `[${scenario}] flotilla defaults (full) / Fastify same features, CPU per request`,
        '<= 0.75',
        full?.cpuVsFastify,
        '×',
        (v) => v <= 0.75,
      );
      add(
        `[${scenario}] flotilla lean (request log off) / floor, req/s`,
        '>= 0.90',
        at(scenario, 'flotilla-lean')?.rpsVsFloor,
        '×',
        (v) => v >= 0.9,
      );
      add(`[${scenario}] cluster / standalone full, CPU per request, keep-alive`, '<= 1.05', clusterCpu, '×', (v) => v <= 1.05);
      // what clustering costs without two workers sharing the one server core: the primary, IPC, heartbeats, pushes
      add(
        `[${scenario}] cluster of 1 worker / standalone full, CPU per request, keep-alive`,
        'reported',
        pairedRatio(runs, scenario, 'flotilla-cluster-1', 'flotilla-full', 'cpuPer1k'),
        '×',
      );
    } else {
      add(
        `[${scenario}] cluster / standalone full, CPU per request, a new connection per request`,
        '<= 1.15',
        clusterCpu,
        '×',
        (v) => v <= 1.15,
      );
      // flotilla's own hand-off against node:cluster's round robin, both with 2 workers on one core
      add(
        `[${scenario}] flotilla cluster (primary hand-off) / Fastify in node:cluster, CPU per request`,
        '<= 1.00',
        pairedRatio(runs, scenario, 'flotilla-cluster-primary', 'fastify-cluster', 'cpuPer1k'),
        '×',
        (v) => v <= 1,
      );
      add(
        `[${scenario}] cluster: the primary's share of the cluster's CPU`,
        'reported',
        at(scenario, 'flotilla-cluster')?.primarySharePct,
        '%',
      );
    }
  }
  add('cluster cold start, primary + 2 workers listening (median)', '<= 300 ms', extras.coldStart?.cluster.medianMs, 'ms', (v) => v <= 300);
  add('idle RSS, largest cluster worker − floor server', '<= +10 MB', rssAboveFloor(extras), 'MB', (v) => v <= 10);
  add('cluster /metrics scrape p99', '<= 50 ms', extras.scrape?.cluster.p99Ms, 'ms', (v) => v <= 50);
  const stuckRun = extras.metricsCost?.scrape;
  add('cluster /metrics scrape p99, 50 routes, workers healthy', '<= 5 ms', stuckRun?.healthy.p99Ms, 'ms', (v) => v <= 5);
  add('cluster /metrics scrape p99, 50 routes, one worker stuck', '<= 5 ms', stuckRun?.stuck.p99Ms, 'ms', (v) => v <= 5);
  add('standalone exit after SIGTERM, 100 idle keep-alive', '<= 500 ms', extras.exit?.standalone.exitMs, 'ms', (v) => v <= 500);
  add('cluster exit after SIGTERM, 100 idle keep-alive', '<= 500 ms', extras.exit?.cluster.exitMs, 'ms', (v) => v <= 500);
  return out;
}

/**
 * Idle VmRSS (after start) of the largest worker of `flotilla-cluster` minus
 * the floor server's, in MB; undefined when either did not run.
 */
export function rssAboveFloor(extras: Extras): number | undefined {
  const idle = extras.rss?.idle ?? {};
  const workers = (idle['flotilla-cluster'] ?? []).filter((p) => p.role === 'worker').map((p) => p.mb);
  const floor = idle['floor']?.[0]?.mb;
  return workers.length === 0 || floor === undefined ? undefined : Math.round((Math.max(...workers) - floor) * 10) / 10;
}

/** A current contender against the same one built from the baseline revision (`--baseline`): current ÷ base, round by round. */
export interface BaselinePair {
  contender: string;
  base: string;
  rpsRatio: number;
  cpuRatio: number;
}

/** Per scenario, every `<name>@base` that ran against `<name>`. */
export function baselinePairs(
  runs: readonly Run[],
  contenders: readonly Contender[],
  scenarios: readonly Scenario[],
): Record<string, BaselinePair[]> {
  const ran = (scenario: string, name: string) => runs.some((r) => r.scenario === scenario && r.contender === name);
  return Object.fromEntries(
    scenarios.map((s) => [
      s.name,
      contenders
        .filter((c) => c.baseOf !== undefined && ran(s.name, c.name) && ran(s.name, c.baseOf))
        .map((c) => ({
          contender: c.baseOf!,
          base: c.name,
          rpsRatio: pairedRatio(runs, s.name, c.baseOf!, c.name, 'rps'),
          cpuRatio: pairedRatio(runs, s.name, c.baseOf!, c.name, 'cpuPer1k'),
        })),
    ]),
  );
}

/** A cluster against the standalone App, in one scenario: cluster ÷ standalone round by round, and how its CPU splits. */
export interface ClusterFigures {
  contender: string;
  rpsRatio: number;
  cpuRatio: number;
  primarySharePct: number | undefined;
  busiestWorkerPct: number | undefined;
  busiestConnectionsPct: number | undefined;
}

/** Per scenario, each cluster contender that ran against `flotilla-full`. */
export function clusterFigures(runs: readonly Run[], rows: Record<string, Row[]>): Record<string, ClusterFigures[]> {
  return Object.fromEntries(
    Object.entries(rows).map(([scenario, list]) => [
      scenario,
      list
        .filter((r) => (CLUSTERS as readonly string[]).includes(r.contender) && list.some((f) => f.contender === 'flotilla-full'))
        .map((r) => ({
          contender: r.contender,
          rpsRatio: pairedRatio(runs, scenario, r.contender, 'flotilla-full', 'rps'),
          cpuRatio: pairedRatio(runs, scenario, r.contender, 'flotilla-full', 'cpuPer1k'),
          primarySharePct: r.primarySharePct,
          busiestWorkerPct: r.busiestWorkerPct,
          busiestConnectionsPct: r.busiestConnectionsPct,
        })),
    ]),
  );
}
