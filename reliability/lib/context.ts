import type { Options } from './options.ts';
import type { Row } from './report.ts';
import type { Runtime } from './runtime.ts';

/** What every scenario gets: the options, a logger, and the capacities measured first (if they were). */
export interface Context {
  readonly options: Options;
  log(line: string): void;
  /** How the clusters run (compiled by default). */
  readonly runtime: Runtime;
  /** The service's capacity: closed-loop wrk requests/s of a 2-worker cluster on `GET /work`. */
  capacityRps: number | undefined;
  /** What the recording undici client drives closed-loop against the same cluster (it is slower than wrk). */
  clientRps: number | undefined;
}

export interface ScenarioOutcome {
  rows: Row[];
  notes: string[];
}

export type Scenario = (ctx: Context) => Promise<ScenarioOutcome>;

/**
 * The steady load of the kill and SIGTERM scenarios, driven by the recording
 * client: half of what it reaches closed-loop (1000 req/s when not measured).
 */
export function steadyRate(ctx: Context): number {
  return ctx.clientRps === undefined ? 1_000 : Math.round(ctx.clientRps * 0.5);
}
