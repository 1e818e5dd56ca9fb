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
  'soak',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

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
  help: boolean;
}

export const USAGE = `npm run reliability -- [options]

  --soak <duration>   soak length, e.g. 30m (default 30s: the short everyday mode)
  --runs <n>          kill -9 runs (default 10)
  --only <list>       comma-separated subset of: ${SCENARIOS.join(', ')}
  --out <file>        results file (default reliability/results/latest.md)
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
  return {
    soakMs: parseDuration(values.soak),
    killRuns,
    // always in the canonical order: capacity first, it sets the load of the others
    only: SCENARIOS.filter((s) => only.includes(s)),
    out: values.out,
    source: values.source,
    help: values.help,
  };
}
