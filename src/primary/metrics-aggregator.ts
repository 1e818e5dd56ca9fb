import type { Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { type MetricFamily, msg } from '../ipc/protocol.ts';
import { toMetricFamilies } from '../metrics/metric-families.ts';
import { mergeFamilies } from './merge-families.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';

interface Pending {
  resolve(metrics: readonly MetricFamily[] | undefined): void;
}

/**
 * One scrape: asks every listening worker for its metrics over IPC (all at
 * once), waits up to the scrape timeout, sums the answers and the primary's
 * share of the service's metrics as prom-client's `AggregatorRegistry` would
 * (`mergeFamilies`: one pass over samples the workers already wrote as text),
 * and adds the primary's own registry. A worker that does not answer in time,
 * or is gone, is left out and counted in `flotilla_scrape_workers_missing`.
 */
export class MetricsAggregator {
  readonly #pending = new Map<string, Pending>();
  readonly #waiting = new WeakMap<Worker, Set<() => void>>();
  readonly #workers: () => Worker[];
  readonly #metrics: PrimaryMetrics;
  readonly #extra: () => readonly Registry[];
  readonly #timeoutMs: number;

  constructor(workers: () => Worker[], metrics: PrimaryMetrics, extra: () => readonly Registry[], timeoutMs: number) {
    this.#workers = workers;
    this.#metrics = metrics;
    this.#extra = extra;
    this.#timeoutMs = timeoutMs;
  }

  get contentType(): string {
    return Registry.PROMETHEUS_CONTENT_TYPE;
  }

  async scrape(): Promise<string> {
    const asked = Promise.all(this.#workers().map((w) => this.#ask(w)));
    // The service's setup runs in the primary too, so a metric it registers exists here and in every worker:
    // the primary's share is summed with theirs. Collected while the workers collect theirs.
    const own = await Promise.all(this.#extra().map(async (registry) => toMetricFamilies(await registry.getMetricsAsJSON())));
    const answers = await asked;
    const received = answers.filter((a) => a !== undefined);
    this.#metrics.scrapeMissing.set(answers.length - received.length);
    // The primary's own metrics win a name clash: a service metric named like one of them is left out.
    const primary = this.#metrics.registry;
    const reserved = new Set(primary.getMetricsAsArray().map((m) => (m as { name: string }).name));
    const blocks = mergeFamilies([...received, ...own], reserved);
    // prom-client's text of a registry: its families' blocks joined by blank lines, then a line feed.
    if (reserved.size > 0) blocks.push((await primary.metrics()).slice(0, -1));
    return `${blocks.join('\n\n')}\n`;
  }

  /** Routes a worker's `flotilla:metrics-response` to the scrape waiting for it. */
  answer(id: string, metrics: readonly MetricFamily[]): void {
    this.#pending.get(id)?.resolve(metrics);
  }

  /** The worker's families; undefined once the scrape timeout passes or the worker is gone (no wait for a dead worker). */
  #ask(worker: Worker): Promise<readonly MetricFamily[] | undefined> {
    const id = randomUUID();
    return new Promise((resolve) => {
      const settle = (metrics: readonly MetricFamily[] | undefined) => {
        clearTimeout(timer);
        unwatch();
        this.#pending.delete(id);
        resolve(metrics);
      };
      const gone = () => settle(undefined);
      const timer = setTimeout(gone, this.#timeoutMs);
      this.#pending.set(id, { resolve: settle });
      const unwatch = this.#whenGone(worker, gone);
      try {
        // A channel that closes before the request is written reports it here rather than as an 'error' event.
        worker.send(msg.metricsRequest(id), (error) => {
          if (error !== null) gone();
        });
      } catch {
        gone();
      }
    });
  }

  /** Calls `gone` when the worker disconnects; one listener per worker however many scrapes wait for it. */
  #whenGone(worker: Worker, gone: () => void): () => void {
    let waiting = this.#waiting.get(worker);
    if (waiting === undefined) {
      const callbacks = new Set<() => void>();
      worker.once('disconnect', () => {
        for (const callback of callbacks) callback();
      });
      this.#waiting.set(worker, callbacks);
      waiting = callbacks;
    }
    const callbacks = waiting;
    callbacks.add(gone);
    return () => callbacks.delete(gone);
  }
}
