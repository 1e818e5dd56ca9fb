import type { Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, Registry } from 'prom-client';

type MetricJson = MetricObjectWithValues<MetricValue<string>>;

import { msg } from '../ipc/protocol.ts';
import type { PrimaryMetrics } from './primary-metrics.ts';

interface Pending {
  resolve(metrics: MetricJson[] | undefined): void;
}

/**
 * One scrape: asks every listening worker for its metrics over IPC, waits up to
 * the scrape timeout, sums the answers and the primary's share of the
 * service's metrics (prom-client's aggregator), and adds the primary's own
 * registry. A worker that does not answer in time is left out and counted in
 * `flotilla_scrape_workers_missing`.
 */
export class MetricsAggregator {
  readonly #pending = new Map<string, Pending>();
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
    const answers = await Promise.all(this.#workers().map((w) => this.#ask(w)));
    const received = answers.filter((a): a is MetricJson[] => a !== undefined);
    this.#metrics.scrapeMissing.set(answers.length - received.length);
    // The service's setup runs in the primary too, so a metric it registers exists here and in every worker:
    // the primary's share is summed with theirs (merging registries would refuse the duplicate name).
    const own = await Promise.all(this.#extra().map((registry) => registry.getMetricsAsJSON()));
    // The primary's own metrics win a name clash: a service metric named like one of them is left out.
    const reserved = new Set(this.#metrics.registry.getMetricsAsArray().map((m) => (m as { name: string }).name));
    const samples = [...received, ...own].map((list) => list.filter((m) => !reserved.has(m.name)));
    const aggregated: Registry = AggregatorRegistry.aggregate(samples);
    return Registry.merge([aggregated, this.#metrics.registry]).metrics();
  }

  /** Routes a worker's `flotilla:metrics-response` to the scrape waiting for it. */
  answer(id: string, metrics: unknown[]): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    pending.resolve(metrics as MetricJson[]);
  }

  #ask(worker: Worker): Promise<MetricJson[] | undefined> {
    const id = randomUUID();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(undefined);
      }, this.#timeoutMs);
      this.#pending.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
      try {
        worker.send(msg.metricsRequest(id));
      } catch {
        this.#pending.get(id)?.resolve(undefined);
        this.#pending.delete(id);
      }
    });
  }
}
