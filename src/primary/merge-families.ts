import type { MetricFamily, NonFiniteValue } from '../ipc/protocol.ts';
import { escapeText } from '../metrics/metric-families.ts';

/**
 * One family over all processes: the first process's name, help, type and
 * aggregator; its samples in first-seen order. In histogram form (`buckets`
 * set) `series`/`keys` hold label sets and `values` `buckets.length + 2`
 * values per label set, in the order of the samples they stand for.
 */
interface Merged {
  readonly first: MetricFamily;
  buckets: readonly string[] | undefined;
  /** Key (sample, or label set in histogram form) → index in `series`. */
  index: Map<string, number>;
  series: string[];
  keys: string[];
  readonly values: number[];
  /** How many processes had each value (for `average`). */
  readonly counts: number[];
}

const NON_FINITE: Record<NonFiniteValue, number> = { NaN: Number.NaN, '+Inf': Number.POSITIVE_INFINITY, '-Inf': Number.NEGATIVE_INFINITY };
const START: Record<MetricFamily['aggregator'], number> = {
  sum: 0,
  average: 0,
  first: 0,
  min: Number.POSITIVE_INFINITY,
  max: Number.NEGATIVE_INFINITY,
  omit: 0,
};

/**
 * Merges the families of several processes into exposition text, one block
 * (`# HELP`, `# TYPE`, samples) per family, with the semantics of prom-client's
 * `AggregatorRegistry.aggregate`: families matched on name, samples on name
 * and label set whatever the label order, combined by the first process's
 * aggregator (`sum` and `average` add in process order; `first`, `min`, `max`;
 * `omit` leaves the family out), everything in first-seen order. One pass,
 * linear in the number of values. Families named in `exclude` are left out.
 *
 * @example
 * const text = `${mergeFamilies([workerA, workerB], new Set()).join('\n\n')}\n`;
 */
export function mergeFamilies(lists: readonly (readonly MetricFamily[])[], exclude: ReadonlySet<string>): string[] {
  const merger = new FamilyMerger(exclude);
  for (const list of lists) merger.add(list);
  return merger.render();
}

/**
 * {@link mergeFamilies} one process at a time, with the result available
 * either as exposition blocks (`render`) or as metric families (`families`)
 * that can be merged again later: the same semantics, in the same order.
 *
 * @example
 * const merger = new FamilyMerger();
 * merger.add(workerA).add(workerB);
 * const kept = merger.families(); // one MetricFamily per family, values combined
 * const text = `${new FamilyMerger().add(kept).add(workerC).render().join('\n\n')}\n`;
 */
export class FamilyMerger {
  readonly #byName = new Map<string, Merged>();
  readonly #exclude: ReadonlySet<string>;

  constructor(exclude: ReadonlySet<string> = new Set()) {
    this.#exclude = exclude;
  }

  /** Adds one process's families (after those already added: they keep the first word on order, help, type and aggregator). */
  add(list: readonly MetricFamily[]): this {
    const byName = this.#byName;
    for (const family of list) {
      if (this.#exclude.has(family.name)) continue;
      let merged = byName.get(family.name);
      if (merged === undefined) {
        if (!Object.hasOwn(START, family.aggregator)) throw new Error(`'${family.aggregator}' is not a defined aggregator.`);
        merged = { first: family, buckets: family.buckets, index: new Map(), series: [], keys: [], values: [], counts: [] };
        byName.set(family.name, merged);
      }
      if (merged.first.aggregator !== 'omit' && family.series.length > 0) add(merged, family);
    }
    return this;
  }

  /** The exposition blocks, as {@link mergeFamilies} returns them. */
  render(): string[] {
    const blocks: string[] = [];
    for (const merged of this.#byName.values()) if (merged.first.aggregator !== 'omit') blocks.push(render(merged));
    return blocks;
  }

  /**
   * The merged families (`omit` ones left out), each with the values its block
   * shows (an `average` already divided), in histogram form when every process
   * sent it so with the same buckets. Fresh arrays: later `add`s do not change them.
   */
  families(): MetricFamily[] {
    const families: MetricFamily[] = [];
    for (const merged of this.#byName.values()) {
      const { first, buckets, series, keys, values, counts } = merged;
      if (first.aggregator === 'omit') continue;
      const family: MetricFamily = {
        name: first.name,
        help: first.help,
        type: first.type,
        aggregator: first.aggregator,
        series: series.slice(),
        values: first.aggregator === 'average' ? values.map((v, i) => v / (counts[i] as number)) : values.slice(),
      };
      if (keys.some((key, i) => key !== series[i])) family.keys = keys.slice();
      if (buckets !== undefined) family.buckets = buckets.slice();
      families.push(family);
    }
    return families;
  }
}

function add(merged: Merged, family: MetricFamily): void {
  if (merged.series.length === 0) merged.buckets = family.buckets;
  if (family.buckets !== undefined && merged.buckets !== undefined && sameList(family.buckets, merged.buckets)) {
    combine(merged, family.series, family.keys ?? family.series, family.values, family.buckets.length + 2);
    return;
  }
  // Forms differ (another bucket list, or a histogram some process sent sample by sample): go sample by sample.
  if (merged.buckets !== undefined) {
    const expanded = expand(merged.first.name, merged.buckets, merged.series, merged.keys);
    merged.series = expanded.series;
    merged.keys = expanded.keys;
    merged.index = new Map(expanded.keys.map((key, i) => [key, i]));
    merged.buckets = undefined;
  }
  if (family.buckets === undefined) combine(merged, family.series, family.keys ?? family.series, family.values, 1);
  else {
    const expanded = expand(family.name, family.buckets, family.series, family.keys ?? family.series);
    combine(merged, expanded.series, expanded.keys, family.values, 1);
  }
}

/** Adds `series` (each with `width` values) to `merged`, combining the values of series already there. */
function combine(merged: Merged, series: readonly string[], keys: readonly string[], raw: MetricFamily['values'], width: number): void {
  const { index, values, counts } = merged;
  const aggregator = merged.first.aggregator;
  for (let i = 0; i < series.length; i++) {
    const key = keys[i] as string;
    let at = index.get(key);
    if (at === undefined) {
      at = merged.series.length;
      index.set(key, at);
      merged.series.push(series[i] as string);
      merged.keys.push(key);
      for (let j = 0; j < width; j++) {
        values.push(START[aggregator]);
        counts.push(0);
      }
    }
    for (let j = 0; j < width; j++) {
      const slot = at * width + j;
      const value = wire(raw[i * width + j] as number | NonFiniteValue);
      const acc = values[slot] as number;
      values[slot] =
        aggregator === 'sum' || aggregator === 'average'
          ? acc + value
          : aggregator === 'min'
            ? Math.min(acc, value)
            : aggregator === 'max'
              ? Math.max(acc, value)
              : counts[slot] === 0
                ? value
                : acc;
      counts[slot] = (counts[slot] as number) + 1;
    }
  }
}

/** The samples a histogram-form family stands for, and their keys: per label set, its buckets, sum and count. */
function expand(
  name: string,
  buckets: readonly string[],
  series: readonly string[],
  keys: readonly string[],
): { series: string[]; keys: string[] } {
  const samples = (labelSets: readonly string[]) =>
    labelSets.flatMap((labels) => {
      const braced = labels === '' ? '' : `{${labels}}`;
      const inner = labels === '' ? '' : `,${labels}`;
      return [...buckets.map((le) => `${name}_bucket{le="${le}"${inner}}`), `${name}_sum${braced}`, `${name}_count${braced}`];
    });
  return { series: samples(series), keys: samples(keys) };
}

function render({ first, buckets, series, values, counts }: Merged): string {
  const name = escapeText(first.name);
  const lines = [`# HELP ${name} ${escapeText(first.help)}`, `# TYPE ${name} ${first.type}`];
  const average = first.aggregator === 'average';
  const text = (slot: number) => valueText(average ? (values[slot] as number) / (counts[slot] as number) : (values[slot] as number));
  if (buckets === undefined) {
    for (let i = 0; i < series.length; i++) lines.push(`${series[i]} ${text(i)}`);
    return lines.join('\n');
  }
  const width = buckets.length + 2;
  const bucketNames = buckets.map((le) => `${name}_bucket{le="${le}"`);
  for (let i = 0; i < series.length; i++) {
    const labels = series[i] as string;
    const inner = labels === '' ? '' : `,${labels}`;
    const braced = labels === '' ? '' : `{${labels}}`;
    for (let j = 0; j < buckets.length; j++) lines.push(`${bucketNames[j]}${inner}} ${text(i * width + j)}`);
    lines.push(`${name}_sum${braced} ${text(i * width + width - 2)}`, `${name}_count${braced} ${text(i * width + width - 1)}`);
  }
  return lines.join('\n');
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((x, i) => x === b[i]));
}

function wire(value: number | NonFiniteValue): number {
  return typeof value === 'number' ? value : NON_FINITE[value];
}

/** prom-client's spelling of a sample value (`Nan` included). */
function valueText(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf';
  return `${value}`;
}
