import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { Ajv } from 'ajv';
import { ITEMS, type Item, type Page } from '../services/data.ts';
import { ITEM_SCHEMA, PAGE_SCHEMA } from '../services/schemas.ts';
import { median } from './stats.ts';

/** The serializers compared on one page value, each `(page) => body`. */
export const SERIALIZERS = ['JSON.stringify', 'fast-json-stringify', 'check + fast-json-stringify', 'flotilla'] as const;
export type SerializerName = (typeof SERIALIZERS)[number];

export interface SerializerCase {
  /** Items per page (the list scenario's `limit=20`, and the largest page). */
  limit: number;
  /** Each item carries two fields the schema does not declare (a row as a database returns it). */
  undeclared: boolean;
  /** Median nanoseconds per call over the rounds. */
  ns: Record<SerializerName, number>;
  /** Median over the rounds of each round's ratio to JSON.stringify (round by round, as the HTTP ratios). */
  vsStringify: Record<SerializerName, number>;
  /** Bytes of the body each writes. */
  bytes: Record<SerializerName, number>;
}

export interface SerializerCost {
  rounds: number;
  callsPerRound: number;
  cases: SerializerCase[];
}

/**
 * The paginated route's body, serialized in this process (no HTTP, no
 * framework around it): `JSON.stringify`; fast-json-stringify compiled from
 * the `Page<T>` schema with its defaults, as Fastify compiles a response
 * schema; the same after an ajv check of the value against the schema (what
 * flotilla would do without its shortcut); and flotilla's serializer of a
 * `paginated()` route (the check that the value fits exactly, then
 * `JSON.stringify`; else the fit check, then fast-json-stringify).
 * Pages of 20 and 100 items, exactly as declared and with two undeclared fields
 * per item (which flotilla and fast-json-stringify leave out, and
 * `JSON.stringify` does not: that row is the reference cost, not an
 * equivalent). Rounds alternate the serializers; medians, and ratios taken
 * round by round. Each serializer's output is checked first: the declared
 * projection of the page.
 */
export async function serializerCost(rounds: number, callsPerRound: number): Promise<SerializerCost> {
  // loaded here, not with the orchestrator: the rest of the benchmark never loads flotilla in this process
  const { paginated } = await import('flotilla');
  const { compileSerializer } = await import('../../src/app/core/serializer.ts');
  const fastJson = createRequire(import.meta.url)('fast-json-stringify') as (schema: unknown) => (doc: unknown) => string;
  const flotilla = compileSerializer(paginated({ method: 'GET', path: '/items', handler: () => undefined }, ITEM_SCHEMA));
  if (flotilla === undefined) throw new Error('a paginated route has no serializer');
  const fjs = fastJson(PAGE_SCHEMA);
  const fits = new Ajv({ strict: false, strictNumbers: true, allowUnionTypes: true }).compile(PAGE_SCHEMA);
  const run: Record<SerializerName, (page: unknown) => string> = {
    'JSON.stringify': (page) => JSON.stringify(page),
    'fast-json-stringify': fjs,
    'check + fast-json-stringify': (page) => {
      if (!fits(page)) throw new Error('the page does not fit its schema');
      return fjs(page);
    },
    flotilla: (page) => flotilla(200, page) ?? '',
  };
  const cases: SerializerCase[] = [];
  for (const limit of [20, 100]) {
    for (const undeclared of [false, true]) {
      // distinct pages, so that no call sees the value of the one before
      const pages = Array.from({ length: 50 }, (_, i) => pageOf(i + 1, limit, undeclared));
      const bytes = {} as Record<SerializerName, number>;
      for (const name of SERIALIZERS) {
        const body = run[name](pages[0]);
        bytes[name] = Buffer.byteLength(body);
        const expected = name === 'JSON.stringify' ? pages[0] : pageOf(1, limit, false);
        if (!isDeepStrictEqual(JSON.parse(body), expected)) throw new Error(`${name} wrote another page than expected (limit ${limit})`);
      }
      const calls = Math.max(50, Math.round((callsPerRound * 20) / limit));
      const perRound: Record<SerializerName, number>[] = [];
      let sink = 0;
      for (let round = 0; round <= rounds; round++) {
        const ns = {} as Record<SerializerName, number>;
        for (const name of SERIALIZERS) {
          const serialize = run[name];
          const t0 = process.hrtime.bigint();
          for (let i = 0; i < calls; i++) sink += serialize(pages[i % pages.length]).length;
          ns[name] = Number(process.hrtime.bigint() - t0) / calls;
        }
        if (round > 0) perRound.push(ns); // round 0 warms the JIT up
      }
      if (sink === 0) throw new Error('nothing was written');
      const of = (f: (r: Record<SerializerName, number>) => number) => median(perRound.map(f));
      const record = (f: (name: SerializerName) => number) =>
        Object.fromEntries(SERIALIZERS.map((name) => [name, f(name)])) as Record<SerializerName, number>;
      cases.push({
        limit,
        undeclared,
        ns: record((name) => Math.round(of((r) => r[name]))),
        vsStringify: record((name) => Math.round(of((r) => r[name] / r['JSON.stringify']) * 100) / 100),
        bytes,
      });
    }
  }
  return { rounds, callsPerRound, cases };
}

/** Page `page` of `limit` items from the data set; with `undeclared`, each item has two fields more. */
function pageOf(page: number, limit: number, undeclared: boolean): Page<Item> {
  const start = ((page - 1) * limit) % (ITEMS.length - limit);
  const data = ITEMS.slice(start, start + limit).map((item) =>
    undeclared ? { ...item, cost: item.price / 2, supplier: `S-${item.id % 97}` } : { ...item },
  );
  return { data, total: ITEMS.length, page, limit, total_pages: Math.ceil(ITEMS.length / limit) };
}
