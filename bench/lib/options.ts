import { parseArgs } from 'node:util';

export interface Options {
  mode: 'quick' | 'full';
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
  coldStarts: number;
  scrapes: number;
  /** Contender names to run (floor and fastify are always added: the ratios need them). */
  only: string[] | undefined;
  scenarios: string[] | undefined;
  extras: boolean;
  /** `--metrics-only`: only the metrics-cost measurements (scrape with a stuck worker, snapshot cost), printed. */
  metricsOnly: boolean;
  /** `--serializer-only`: only the in-process serializer comparison on the paginated route's body, printed. */
  serializerOnly: boolean;
  /** Rounds and calls per round (for a page of 20; fewer for larger pages) of the serializer comparison. */
  serializerRounds: number;
  serializerCalls: number;
  /** Sequential scrapes per case of the stuck-worker scrape measurement, and iterations of the snapshot micro-benchmark. */
  stuckScrapes: number;
  snapshotIterations: number;
  /** Report name under bench/results/ (`latest` for full runs, `quick` for quick ones). */
  out: string;
  /** `--profile <contender>`: CPU-profile that contender under load instead of benchmarking. */
  profile: string | undefined;
  /** Run the servers from the TypeScript sources (type stripping) instead of a compiled copy. */
  source: boolean;
  /** `--baseline REV`: also run flotilla's src/ as of this git revision (contenders `<name>@base`). */
  baseline: string | undefined;
  /** `--footprint`: only the idle pod's CPU, memory, wake-ups and cold start, flotilla cluster beside Fastify in node:cluster. */
  footprint: boolean;
  /** `--footprint-strace`: also `strace -c -f -p` one worker of each for an idle window. */
  footprintStrace: boolean;
  /** `--cluster-compare`: only flotilla's cluster, Fastify in node:cluster and Platformatic Watt, 2 workers each, side by side. */
  clusterCompare: boolean;
}

export const USAGE = `npm run bench [-- options]
  --quick               everyday mode, ~2 minutes: the list route with keep-alive and with a new connection per
                        request, 2 s runs, no Express / no-op tracer / response-schema / unpinned cluster rows,
                        one cold start, 100 scrapes of the cluster only
  --rounds N            measured rounds (full 5, quick 3; at least 3)
  --duration S          seconds per run (full 3, quick 2)
  --warmup S            seconds of the warm-up run of each contender and scenario (full 5, quick 2)
  --connections N       keep-alive connections (default 50)
  --only a,b            only these contenders (floor and fastify are always included); names a full-mode-only
                        contender in quick mode too (e.g. --only flotilla-full,flotilla-no-schema,fastify-schema)
  --scenario A,B        only these scenarios: list, get (keep-alive), close (a new connection per request),
                        list-gzip, list-br, list-zstd (compression, with --only flotilla-no-compression)
  --baseline REV        also build flotilla's src/ as of git revision REV (with the current bench/servers and
                        bench/services) and run flotilla-full@base and flotilla-lean@base (with --only: the
                        flotilla contenders named) beside the current ones; reports current ÷ base
  --no-extras           skip cold start, RSS, scrape and exit measurements
  --metrics-only        only the metrics-cost measurements (scrape latency with a worker stuck, a worker's
                        snapshot cost), printed; nothing written
  --serializer-only     only the in-process serializer comparison on the paginated route's body (JSON.stringify,
                        fast-json-stringify as Fastify compiles it, flotilla's response serializer), printed
  --out NAME            write bench/results/NAME.md/.json (default: latest, or quick with --quick)
  --profile NAME        CPU-profile one contender under load (node --cpu-prof) and print its hottest functions
  --source              run the servers from the .ts sources (as npm start) instead of compiled JavaScript
  --footprint           only what an idle pod costs: a 2-worker flotilla cluster (env: production) beside Fastify
                        in node:cluster with 2 workers, alternating rounds (3 unless --rounds): CPU, PSS and
                        wake-ups per process and thread over 10 s without traffic, and spawn → first 200 with a
                        warm and a cold compile cache; writes bench/results/footprint.md + .json (or --out NAME)
  --footprint-strace    with --footprint: also strace -c -f one worker of each for 10 s idle (if strace is installed)
  --cluster-compare     only three 2-worker clusters side by side: flotilla (CLI, default balancing), Fastify 5 in
                        node:cluster and Platformatic Watt (installed on first use into bench/.watt/), request log
                        off, keep-alive and Connection: close at 64 and 256 connections, alternating rounds (3 unless
                        --rounds, 1 allowed); --scenario picks cases (keep-alive-64, close-64, keep-alive-256,
                        close-256); writes bench/results/cluster-compare.md + .json (or --out NAME)
`;

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      scenario: { type: 'string' },
      'no-extras': { type: 'boolean', default: false },
      'metrics-only': { type: 'boolean', default: false },
      'serializer-only': { type: 'boolean', default: false },
      out: { type: 'string' },
      profile: { type: 'string' },
      source: { type: 'boolean', default: false },
      baseline: { type: 'string' },
      footprint: { type: 'boolean', default: false },
      'footprint-strace': { type: 'boolean', default: false },
      'cluster-compare': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const quick = values.quick;
  const footprint = values.footprint || values['footprint-strace'];
  const clusterCompare = values['cluster-compare'];
  const num = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
  const only = values.only?.split(',').filter((s) => s !== '');
  return {
    mode: quick ? 'quick' : 'full',
    // the cluster comparison takes a single round too (a short check); the others need 3 for their medians
    rounds: Math.max(clusterCompare ? 1 : 3, num(values.rounds, quick || footprint || clusterCompare ? 3 : 5)),
    durationS: num(values.duration, quick ? 2 : 3),
    warmupS: num(values.warmup, quick ? 2 : 5),
    connections: num(values.connections, 50),
    coldStarts: quick ? 1 : 5,
    scrapes: quick ? 100 : 200,
    only: only === undefined ? undefined : [...new Set(['floor', 'fastify', ...only])],
    scenarios: values.scenario === undefined ? (quick && !clusterCompare ? ['list', 'close'] : undefined) : values.scenario.split(','),
    extras: !values['no-extras'],
    metricsOnly: values['metrics-only'],
    serializerOnly: values['serializer-only'],
    serializerRounds: quick ? 5 : 9,
    serializerCalls: quick ? 5_000 : 20_000,
    stuckScrapes: quick ? 200 : 500,
    snapshotIterations: quick ? 300 : 1000,
    out: values.out ?? (footprint ? 'footprint' : clusterCompare ? 'cluster-compare' : quick ? 'quick' : 'latest'),
    profile: values.profile,
    source: values.source,
    baseline: values.baseline,
    footprint,
    footprintStrace: values['footprint-strace'],
    clusterCompare,
  };
}
