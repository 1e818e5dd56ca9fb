import type { MetricFamily } from '../ipc/protocol.ts';
import { toMetricFamilies } from '../metrics/metric-families.ts';
import { type HeartbeatPolicy, idleIntervalMs } from './heartbeat.ts';
import { MetricsStore } from './metrics-store.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';

/** The primary's own snapshot in the store (see `PrimaryMetrics.shared`). */
const PRIMARY_KEY = 'primary';
/** A snapshot older than this many push intervals makes its process stale (see `staleAfterMs`). */
const STALE_INTERVALS = 3;

/**
 * How long a process may go without a snapshot or a heartbeat answer before it counts as stale:
 * three push intervals, or an idle worker's heartbeat round (`idleIntervalMs`) plus one interval when
 * that is longer, so a quiet worker is never stale between its answers.
 */
export function staleAfterMs(metricsIntervalMs: number, heartbeat: HeartbeatPolicy): number {
  return Math.max(STALE_INTERVALS * metricsIntervalMs, idleIntervalMs(heartbeat) + heartbeat.intervalMs);
}

/**
 * The cluster's metrics text: the sums of the snapshots every process pushes
 * (workers by node:cluster id, service threads as `service:<n>`), kept in a
 * `MetricsStore`, then the primary's own metrics. The sums are rendered again
 * right after the messages that changed them, off the scrape's path, so that a
 * scrape only joins two texts.
 *
 * @example
 * const exposition = new ClusterExposition(metrics);
 * exposition.update('1', families); await exposition.scrape(staleAfterMs(1_000, heartbeat));
 */
export class ClusterExposition {
  readonly #metrics: PrimaryMetrics;
  readonly #store = new MetricsStore();
  /** The primary's own metric names: a service metric named like one of them is left out of the sums. */
  readonly #reserved: ReadonlySet<string>;
  /** The store's text as last rendered; undefined once a snapshot or an exit changed it. */
  #text: string | undefined;
  #renderScheduled = false;

  constructor(metrics: PrimaryMetrics) {
    this.#metrics = metrics;
    this.#reserved = new Set(metrics.registry.getMetricsAsArray().map((m) => (m as { name: string }).name));
  }

  /** A process was started: it counts as missing until its first snapshot. */
  join(key: string): void {
    this.#store.join(key);
  }

  /** A process's latest snapshot. */
  update(key: string, families: readonly MetricFamily[]): void {
    this.#changed(this.#store.update(key, families));
  }

  /** A process answered a heartbeat: its last snapshot is current (see `MetricsStore.touch`). */
  touch(key: string): void {
    this.#store.touch(key);
  }

  /** A process is gone: its counters stay in the sums. */
  retire(key: string): void {
    this.#store.retire(key);
    this.#changed(true);
  }

  /** One scrape: the sums as they stand (no process is asked, none is waited for), then the primary's own metrics. */
  async scrape(staleMs: number): Promise<string> {
    this.#metrics.scrapeStale.set(this.#store.stale(Date.now(), staleMs));
    this.#metrics.scrapeMissing.set(this.#store.missing);
    // the primary's share of metrics the workers count too, summed with theirs like a process's snapshot
    this.update(PRIMARY_KEY, toMetricFamilies(await this.#metrics.shared.getMetricsAsJSON()));
    // prom-client's text of a registry: its families' blocks joined by blank lines, then a line feed
    const own = await this.#metrics.registry.metrics();
    const sums = this.#render();
    return sums === '' ? own : `${sums}\n\n${own}`;
  }

  #changed(changed: boolean): void {
    if (!changed) return;
    this.#text = undefined;
    if (this.#renderScheduled) return;
    this.#renderScheduled = true;
    setImmediate(() => {
      this.#renderScheduled = false;
      this.#render();
    });
  }

  #render(): string {
    this.#text ??= this.#store.render(this.#reserved).join('\n\n');
    return this.#text;
  }
}
