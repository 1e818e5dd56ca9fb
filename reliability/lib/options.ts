import { parseArgs } from 'node:util';
import { parseDuration } from './clock.ts';

export const SCENARIOS = [
  'capacity',
  'kill',
  'sigterm',
  'slow',
  'stuck',
  'busy-job',
  'memory',
  'prometheus',
  'coordination',
  'balancing',
  'overload',
  'soak',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** The servers the overload scenario compares, and its two kinds of clients. */
export const OVERLOAD_CONTENDERS = ['flotilla-primary', 'flotilla-kernel', 'fastify', 'fastify-under-pressure'] as const;
export type OverloadContender = (typeof OVERLOAD_CONTENDERS)[number];
export const OVERLOAD_MODES = ['fresh', 'keep-alive'] as const;
export type OverloadMode = (typeof OVERLOAD_MODES)[number];

export interface Options {
  /** Soak length, ms. */
  soakMs: number;
  /** Runs of the kill -9 scenario. */
  killRuns: number;
  only: readonly ScenarioName[];
  /** Where the Markdown results go (relative to the working directory). */
  out: string;
  /** Run the clusters from the TypeScript sources instead of compiled JavaScript. */
  source: boolean;
  /** Overload: how long each spike lasts, ms. */
  overloadMs: number;
  /** Overload: the spikes' rates, as multiples of each contender's capacity. */
  overloadMultipliers: readonly number[];
  overloadContenders: readonly OverloadContender[];
  overloadModes: readonly OverloadMode[];
  help: boolean;
}

export const USAGE = `npm run reliability -- [options]

  --soak <duration>   soak length, e.g. 30m (default 30s: the short everyday mode)
  --runs <n>          kill -9 runs (default 10)
  --only <list>       comma-separated subset of: ${SCENARIOS.join(', ')}
  --out <file>        results file (default reliability/results/latest.md)
  --overload-seconds <n>      overload: length of each spike (default 15)
  --overload-multipliers <l>  overload: spike rates as multiples of capacity, comma-separated (default 2,3;
                              the targets are judged at 3, or at the largest without 3)
  --overload-contenders <l>   overload: a subset of ${OVERLOAD_CONTENDERS.join(', ')}
  --overload-modes <l>        overload: a subset of ${OVERLOAD_MODES.join(', ')}
  --source            run the clusters from the .ts sources (as npm start does) instead of compiled
                      JavaScript (as the published package and the Docker image do)
  --help              this text
`;

export function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      soak: { type: 'string', default: '30s' },
      runs: { type: 'string', default: '10' },
      only: { type: 'string' },
      out: { type: 'string', default: 'reliability/results/latest.md' },
      source: { type: 'boolean', default: false },
      'overload-seconds': { type: 'string', default: '15' },
      'overload-multipliers': { type: 'string', default: '2,3' },
      'overload-contenders': { type: 'string', default: OVERLOAD_CONTENDERS.join(',') },
      'overload-modes': { type: 'string', default: OVERLOAD_MODES.join(',') },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const only = values.only === undefined ? [...SCENARIOS] : values.only.split(',').map((s) => s.trim());
  for (const name of only) {
    if (!(SCENARIOS as readonly string[]).includes(name)) throw new Error(`unknown scenario '${name}' (known: ${SCENARIOS.join(', ')})`);
  }
  const killRuns = Number(values.runs);
  if (!Number.isInteger(killRuns) || killRuns < 1) throw new Error(`--runs must be a positive integer, got '${values.runs}'`);
  const overloadSeconds = Number(values['overload-seconds']);
  if (!(overloadSeconds > 0)) throw new Error(`--overload-seconds must be a positive number, got '${values['overload-seconds']}'`);
  const overloadMultipliers = values['overload-multipliers'].split(',').map((m) => Number(m.trim()));
  if (overloadMultipliers.some((m) => !(m > 0))) {
    throw new Error(`--overload-multipliers must be positive numbers, got '${values['overload-multipliers']}'`);
  }
  return {
    soakMs: parseDuration(values.soak),
    killRuns,
    // always in the canonical order: capacity first, it sets the load of the others
    only: SCENARIOS.filter((s) => only.includes(s)),
    out: values.out,
    source: values.source,
    overloadMs: overloadSeconds * 1000,
    overloadMultipliers,
    overloadContenders: subset(values['overload-contenders'], OVERLOAD_CONTENDERS, '--overload-contenders'),
    overloadModes: subset(values['overload-modes'], OVERLOAD_MODES, '--overload-modes'),
    help: values.help,
  };
}

/** The known names listed in `text` (comma-separated), in their canonical order. */
function subset<T extends string>(text: string, known: readonly T[], option: string): T[] {
  const names = text.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!(known as readonly string[]).includes(name)) throw new Error(`${option}: unknown '${name}' (known: ${known.join(', ')})`);
  }
  return known.filter((k) => names.includes(k));
}
