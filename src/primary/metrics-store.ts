import type { MetricFamily } from '../ipc/metric-family.ts';
import { FamilyMerger } from './merge-families.ts';

/** A live process: its latest snapshot (undefined until it sends one) and when it came. */
interface Live {
  families: readonly MetricFamily[] | undefined;
  at: number;
}

/**
 * The cluster's metrics as the primary keeps them between scrapes: each live
 * process's latest snapshot (workers push one every push interval), and the
 * totals of the processes that are gone. A scrape renders from here at once;
 * nothing waits on IPC. Pure data: no IPC, no timers; time is passed in (or
 * read from `now`, `Date.now` by default).
 *
 * Why retired totals: Prometheus reads any drop of a counter as a reset, so a
 * sum over the live processes only makes `rate()`/`increase()` spike after
 * every crash, recycle and rolling restart. When a process is retired, what it
 * counted stays in the sum:
 *
 * - counters and histograms (every bucket, `_sum`, `_count`) whose aggregator
 *   is `sum` are folded into retired totals, per label set, so memory is
 *   bounded by the distinct label sets, not by the number of dead processes;
 * - summaries with aggregator `sum`: `_sum` and `_count` are folded in the same
 *   way; the quantiles are dropped (a quantile of a process that is gone
 *   cannot be combined with anything). A label set only a retired process had
 *   keeps its `_sum`/`_count` without quantile lines, which the exposition
 *   format allows;
 * - gauges are dropped: they describe a process that no longer exists;
 * - families whose aggregator is not `sum` (`first`, `min`, `max`, `average`)
 *   are dropped whatever their type: the aggregator says the value describes
 *   the live processes (one of them, their extreme or their mean), not work
 *   the cluster did, and such a value cannot stay monotone anyway (a fresh
 *   process lowers a `min` or an `average` with no one retiring). They stay
 *   exactly what prom-client would aggregate over the live processes;
 * - `omit` families stay omitted.
 *
 * The live part renders as `mergeFamilies` renders it (byte for byte
 * prom-client's `AggregatorRegistry.aggregate` of the snapshots, in the order
 * the processes joined); the retired totals are merged after it as one more
 * process. So a `sum` counter or histogram never decreases from one render to
 * the next, through any sequence of updates and retires, as long as each
 * process's own snapshots never decrease. One definition per metric name is
 * assumed across processes, retired ones included: the first live process's
 * type, help and aggregator win, as in prom-client.
 *
 * A key is one process. After `retire(key)`, snapshots for `key` are ignored
 * (a message read after the exit was reported would count the process twice)
 * until `join(key)` says a new process now goes by that key. So: `join` each
 * process when it starts (which is also what makes `missing` count it), and
 * prefer keys that are never reused, such as the cluster's `worker.id` (a pid
 * can come back).
 *
 * @example
 * const store = new MetricsStore();
 * cluster.on('fork', (worker) => store.join(String(worker.id)));
 * // on each `flotilla:metrics` message of a worker:
 * store.update(String(worker.id), message.metrics);
 * cluster.on('exit', (worker) => store.retire(String(worker.id)));
 * // on each scrape:
 * metrics.scrapeStale.set(store.stale(Date.now(), 3 * pushIntervalMs));
 * metrics.scrapeMissing.set(store.missing);
 * const text = `${[...store.render(reserved), own].join('\n\n')}\n`;
 */
export class MetricsStore {
  readonly #live = new Map<string, Live>();
  /** The retired totals, as one process's families (one per name, merged). */
  #retired: MetricFamily[] = [];
  /** Keys retired lately (the last {@link RETIRED_KEYS}) and not joined since, whose late snapshots are ignored. */
  readonly #gone = new Set<string>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /**
   * A process now goes by `key` and has sent nothing yet: it counts as
   * `missing` until its first `update`. A key already live is left as it is; a
   * key retired before is taken up again by this new process (its snapshots
   * are accepted again).
   */
  join(key: string, at: number = this.#now()): void {
    this.#gone.delete(key);
    if (!this.#live.has(key)) this.#live.set(key, { families: undefined, at });
  }

  /**
   * A live process answered (a heartbeat): its last snapshot is still its current one. Processes
   * push a snapshot only when their counters moved (and an idle one now and then), so staleness counts
   * from the last sign of life, not from the last snapshot.
   */
  touch(key: string, at: number = this.#now()): void {
    const live = this.#live.get(key);
    if (live?.families !== undefined) live.at = at;
  }

  /**
   * A live process's latest snapshot, replacing its previous one (joining the
   * process if it has not joined). The families are kept, not copied: do not
   * change them. False, and nothing changes, when `key` was retired (lately)
   * and not joined since: that process's counts are already in the retired totals.
   */
  update(key: string, families: readonly MetricFamily[], at: number = this.#now()): boolean {
    const live = this.#live.get(key);
    if (live !== undefined) {
      live.families = families;
      live.at = at;
    } else if (this.#gone.has(key)) return false;
    else this.#live.set(key, { families, at });
    return true;
  }

  /**
   * The process exited (crash, kill, recycle, rolling restart): its last
   * snapshot's counts move into the retired totals (see the class comment for
   * what is kept), and it is no longer live. An unknown key does nothing.
   * Linear in the retired totals plus the snapshot; meant to be rare.
   */
  retire(key: string): void {
    const live = this.#live.get(key);
    if (live === undefined) return;
    const kept = live.families?.flatMap((family) => countsOf(family) ?? []) ?? [];
    // The totals as the last render added them up (this process in its place among the live ones)…
    const before = kept.length > 0 ? totals(this.#merged().add(this.#retired).families()) : undefined;
    this.#live.delete(key);
    this.#gone.add(key);
    if (this.#gone.size > RETIRED_KEYS) this.#gone.delete(this.#gone.values().next().value as string);
    if (before === undefined) return;
    // …and the live ones the next render adds the retired totals to.
    const after = totals(this.#merged().families());
    const retired = new FamilyMerger().add(this.#retired).add(kept).families();
    for (const family of retired) keepMonotone(family, before.get(family.name), after.get(family.name));
    this.#retired = retired;
  }

  /**
   * The exposition blocks (the caller joins them with blank lines and ends the
   * text with a line feed): every live snapshot merged as `mergeFamilies`
   * merges them, then the retired totals added on top. Families named in
   * `exclude` are left out.
   */
  render(exclude: ReadonlySet<string>): string[] {
    return this.#merged(exclude).add(this.#retired).render();
  }

  /** The live snapshots merged, in the order the processes joined. */
  #merged(exclude?: ReadonlySet<string>): FamilyMerger {
    const merger = new FamilyMerger(exclude);
    for (const live of this.#live.values()) if (live.families !== undefined) merger.add(live.families);
    return merger;
  }

  /** Live processes whose latest snapshot is older than `staleAfterMs` at `now` (their last values still count). */
  stale(now: number, staleAfterMs: number): number {
    let stale = 0;
    for (const live of this.#live.values()) if (live.families !== undefined && now - live.at > staleAfterMs) stale++;
    return stale;
  }

  /** Live processes that have not sent any snapshot yet. */
  get missing(): number {
    let missing = 0;
    for (const live of this.#live.values()) if (live.families === undefined) missing++;
    return missing;
  }

  /** Live processes, with or without a snapshot. */
  get live(): number {
    return this.#live.size;
  }

  /** Milliseconds since `key`'s latest snapshot at `now`; undefined when it is not live or has sent none. */
  age(key: string, now: number = this.#now()): number | undefined {
    const live = this.#live.get(key);
    return live?.families === undefined ? undefined : now - live.at;
  }
}

/** How many retired keys are remembered to ignore late snapshots (a late one comes within milliseconds of the exit); bounds the memory. */
const RETIRED_KEYS = 1024;

/** What of a family outlives its process: see {@link MetricsStore}. Undefined when nothing. */
function countsOf(family: MetricFamily): MetricFamily | undefined {
  if (family.aggregator !== 'sum' || family.series.length === 0) return undefined;
  if (family.type === 'counter' || family.type === 'histogram') return family;
  if (family.type !== 'summary' || family.buckets !== undefined) return undefined;
  const sum = `${family.name}_sum`;
  const count = `${family.name}_count`;
  const series: string[] = [];
  const values: MetricFamily['values'] = [];
  const keys: string[] = [];
  for (let i = 0; i < family.series.length; i++) {
    const text = family.series[i] as string;
    const brace = text.indexOf('{');
    const name = brace === -1 ? text : text.slice(0, brace);
    if (name !== sum && name !== count) continue;
    series.push(text);
    values.push(family.values[i] as MetricFamily['values'][number]);
    keys.push(family.keys?.[i] ?? text);
  }
  if (series.length === 0) return undefined;
  return family.keys === undefined ? { ...family, series, values } : { ...family, series, values, keys };
}

/** A family's values by sample: the key of each sample whatever the form (`name_bucket{le="…",labels}` in histogram form). */
function sampleKeys(family: MetricFamily): string[] {
  const keys = family.keys ?? family.series;
  const { buckets, name } = family;
  if (buckets === undefined) return keys;
  return keys.flatMap((labels) => {
    const inner = labels === '' ? '' : `,${labels}`;
    const braced = labels === '' ? '' : `{${labels}}`;
    return [...buckets.map((le) => `${name}_bucket{le="${le}"${inner}}`), `${name}_sum${braced}`, `${name}_count${braced}`];
  });
}

/** The values of the summed families (as `FamilyMerger.families` gives them: numbers), by family name and sample key. */
function totals(families: readonly MetricFamily[]): Map<string, Map<string, number>> {
  const byName = new Map<string, Map<string, number>>();
  for (const family of families) {
    if (family.aggregator !== 'sum') continue;
    const values = family.values as number[];
    byName.set(family.name, new Map(sampleKeys(family).map((key, i) => [key, values[i] as number])));
  }
  return byName;
}

/**
 * Floating-point addition is not associative: once a process's values move
 * from among the live ones to the retired totals, the same terms are added in
 * another order, and a total can come out one unit in the last place lower,
 * which Prometheus would take for a counter reset. Raises such retired values
 * just enough that each total the next render adds up (the live values, then
 * the retired one) is at least what the last one showed; later renders only
 * add non-negative increments in a fixed order, and rounding is monotone.
 */
function keepMonotone(retired: MetricFamily, before: Map<string, number> | undefined, live: Map<string, number> | undefined): void {
  if (before === undefined) return;
  const values = retired.values as number[];
  const keys = sampleKeys(retired);
  for (let i = 0; i < values.length; i++) {
    const shown = before.get(keys[i] as string);
    if (shown === undefined || !Number.isFinite(shown)) continue;
    const rest = live?.get(keys[i] as string) ?? 0;
    let value = values[i] as number;
    if (!Number.isFinite(rest) || !Number.isFinite(value) || rest + value >= shown) continue;
    value = shown - rest;
    for (let step = 0; rest + value < shown && step < 64; step++) value = nextUp(value);
    values[i] = rest + value >= shown ? value : shown;
  }
}

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);

/** The least double greater than `x` (finite `x`). */
function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  f64[0] = x;
  i64[0] = (i64[0] as bigint) + (x > 0 ? 1n : -1n);
  return f64[0] as number;
}
