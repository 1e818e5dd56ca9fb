import type { Launch } from './server-process.ts';

export interface Contender extends Omit<Launch, 'core'> {
  name: string;
  title: string;
  /** Pinned to the server core (standalone servers, and the cluster as a whole), or left to the scheduler. */
  pinned: boolean;
  /** Left out of quick runs. */
  fullOnly?: boolean;
  /** `--baseline`: the current contender this one is the baseline build of (`<name>@base`). */
  baseOf?: string;
}

/** In this order, round after round (A B C … A B C …). */
export const CONTENDERS: readonly Contender[] = [
  { name: 'floor', title: 'floor: node:http + find-my-way', entry: 'servers/floor.ts', readyLines: 1, pinned: true },
  { name: 'fastify', title: 'Fastify 5, full', entry: 'servers/fastify.ts', readyLines: 1, pinned: true },
  {
    name: 'fastify-schema',
    title: 'Fastify 5, full, response schemas',
    entry: 'servers/fastify-schema.ts',
    readyLines: 1,
    pinned: true,
    fullOnly: true,
  },
  { name: 'express', title: 'Express 5, full', entry: 'servers/express.ts', readyLines: 1, pinned: true, fullOnly: true },
  { name: 'flotilla-full', title: 'flotilla standalone, full', entry: 'servers/flotilla-full.ts', readyLines: 1, pinned: true },
  { name: 'flotilla-lean', title: 'flotilla standalone, lean', entry: 'servers/flotilla-lean.ts', readyLines: 1, pinned: true },
  {
    name: 'flotilla-no-schema',
    title: 'flotilla full, no response schemas',
    entry: 'servers/flotilla-no-schema.ts',
    readyLines: 1,
    pinned: true,
    fullOnly: true,
  },
  {
    name: 'flotilla-no-tracing',
    title: 'flotilla full, no-op tracer',
    entry: 'servers/flotilla-no-tracing.ts',
    readyLines: 1,
    pinned: true,
    fullOnly: true,
  },
  {
    name: 'flotilla-no-compression',
    title: 'flotilla full, compression.enabled: false',
    entry: 'servers/flotilla-no-compression.ts',
    readyLines: 1,
    pinned: true,
    fullOnly: true,
  },
  {
    name: 'flotilla-cluster',
    title: 'flotilla cluster, 2 workers (CLI)',
    entry: 'servers/flotilla-cluster.yaml',
    readyLines: 2,
    pinned: true,
  },
  {
    name: 'fastify-cluster',
    title: 'Fastify 5, full, node:cluster with 2 workers (round robin)',
    entry: 'servers/fastify-cluster.ts',
    readyLines: 2,
    pinned: true,
  },
  {
    name: 'flotilla-cluster-primary',
    title: 'flotilla cluster, 2 workers, balancing: primary',
    entry: 'servers/flotilla-cluster-primary.yaml',
    readyLines: 2,
    pinned: true,
  },
  {
    name: 'flotilla-cluster-1',
    title: 'flotilla cluster, 1 worker (CLI)',
    entry: 'servers/flotilla-cluster.yaml',
    readyLines: 1,
    env: { WORKERS: '1' },
    pinned: true,
    fullOnly: true,
  },
  {
    name: 'flotilla-cluster-unpinned',
    title: 'flotilla cluster, 2 workers, unpinned',
    entry: 'servers/flotilla-cluster.yaml',
    readyLines: 2,
    pinned: false,
    fullOnly: true,
  },
];

/**
 * The order of the runs within a round: each pair a target compares (lean and
 * floor, flotilla full and Fastify, the cluster and flotilla full) runs back
 * to back, so that a slow spell of the host hits both sides alike; Fastify
 * runs with and without response schemas back to back too (flotilla without
 * them comes one run after the kernel-balanced cluster: flotilla full has only
 * two neighbours, and the kernel cluster comes one run after it).
 */
export const RUN_ORDER: readonly string[] = [
  'floor',
  'flotilla-lean',
  'fastify-schema',
  'fastify',
  'flotilla-full',
  'flotilla-cluster',
  'fastify-cluster',
  'flotilla-cluster-primary',
  'flotilla-cluster-1',
  'flotilla-no-schema',
  'flotilla-no-tracing',
  'flotilla-no-compression',
  'express',
  'flotilla-cluster-unpinned',
];

/**
 * The contenders of one round in their run order (see `RUN_ORDER`), each
 * baseline build (`<name>@base`) beside its current one: after it in odd
 * rounds, before it in even ones, so that neither side always runs second.
 */
export function roundOrder(contenders: readonly Contender[], round: number): Contender[] {
  const rank = (c: Contender) => RUN_ORDER.indexOf(c.baseOf ?? c.name);
  const sorted = [...contenders].sort((a, b) => rank(a) - rank(b) || (a.baseOf === undefined ? -1 : 1));
  if (round % 2 === 1) return sorted;
  const out = [...sorted];
  for (let i = 0; i + 1 < out.length; i++) {
    if (out[i + 1]!.baseOf === out[i]!.name) [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
  }
  return out;
}

export interface Scenario {
  name: string;
  title: string;
  path: string;
  idCount?: number;
  /** Extra request headers (`Connection: close`). */
  headers?: Record<string, string>;
  /** A request body: every request is then a POST with it (`Content-Type` in `headers`). */
  body?: string;
  /** Only these contenders (and their baseline builds) run it; default: every contender. */
  contenders?: readonly string[];
  /** One keep-alive connection serves many requests (false: a new connection per request). */
  keepAlive: boolean;
  /** Measures one feature (compression): none of the targets is read from it, its own ratios are reported. */
  feature?: 'compression';
}

/** The contenders of the compression scenarios: flotilla with it on (the default) and off, and Fastify with `@fastify/compress`. */
const COMPRESSION_CONTENDERS = ['fastify', 'flotilla-full', 'flotilla-no-compression'];

/** The list route (2 KB of JSON) asked with one encoding: each contender compresses every reply with it. */
function compressed(encoding: string, note: string): Scenario {
  return {
    name: `list-${encoding}`,
    title: `GET /items?page=3&limit=20 with Accept-Encoding: ${encoding}${note}`,
    path: '/items?page=3&limit=20',
    headers: { 'Accept-Encoding': encoding },
    contenders: COMPRESSION_CONTENDERS,
    keepAlive: true,
    feature: 'compression',
  };
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'list', title: 'GET /items?page=3&limit=20', path: '/items?page=3&limit=20', keepAlive: true },
  { name: 'get', title: 'GET /items/:id (ids 1…10 000 in turn)', path: '/items/1', idCount: 10_000, keepAlive: true },
  {
    name: 'close',
    title: 'GET /items?page=3&limit=20, a new connection per request (Connection: close)',
    path: '/items?page=3&limit=20',
    headers: { Connection: 'close' },
    contenders: ['floor', 'flotilla-full', 'flotilla-cluster', 'fastify-cluster', 'flotilla-cluster-primary'],
    keepAlive: false,
  },
  compressed('gzip', ''),
  compressed('br', ''),
  compressed('zstd', ''),
];

/** Whether `c` runs in `scenario`. */
export function runsIn(c: Contender, scenario: Scenario): boolean {
  return scenario.contenders === undefined || scenario.contenders.includes(c.baseOf ?? c.name);
}
