import { EVENT_LOOP_MONITORING_MS, withoutTotalGauges } from '../metrics/process-metrics.ts';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from '../metrics/prom-client.ts';
import { shedCounter } from '../metrics/shed-metrics.ts';

/** The sample of a worker's vitals the primary exports per slot (from its heartbeat answers). */
export interface WorkerVitals {
  /** Event-loop utilization over the last interval, 0..1. */
  elu: number;
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  /** Resident set size, bytes. */
  rssBytes: number;
}

/** The primary's own metrics: workers up, restarts by reason, deaths on requests by route, scrape completeness, per-worker vitals, its process. */
export class PrimaryMetrics {
  readonly registry = new Registry();
  readonly workersUp = new Gauge({ name: 'flotilla_workers_up', help: 'Workers currently listening.', registers: [this.registry] });
  readonly workersDesired = new Gauge({
    name: 'flotilla_workers_desired',
    help: 'Workers the primary keeps running.',
    registers: [this.registry],
  });
  readonly restarts = new Counter({
    name: 'flotilla_worker_restarts_total',
    help: 'Workers replaced after an unexpected exit, by reason.',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly requestDeaths = new Counter({
    name: 'flotilla_worker_request_deaths_total',
    help: 'Workers that died after receiving requests, by the route blamed (route templates in flight, else the last to end; unknown if none was named).',
    labelNames: ['route'],
    registers: [this.registry],
  });
  readonly scrapeMissing = new Gauge({
    name: 'flotilla_scrape_workers_missing',
    help: 'Live workers that have not sent any metrics snapshot yet (nothing of theirs is in the sums).',
    registers: [this.registry],
  });
  readonly scrapeStale = new Gauge({
    name: 'flotilla_scrape_workers_stale',
    help: 'Live workers whose last metrics snapshot is older than a few push intervals (their last values are still in the sums).',
    registers: [this.registry],
  });
  /** Metrics the workers also count: summed with theirs rather than rendered beside them (see `ClusterExposition`). */
  readonly shared = new Registry();
  readonly shed = shedCounter(this.shared, ['queue', 'client-gone']);
  readonly handoffWait = new Histogram({
    name: 'flotilla_handoff_wait_seconds',
    help: 'Time a connection waited in the primary, from its accept to its hand-off to a worker (balancing: primary).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly handoffQueue = new Gauge({
    name: 'flotilla_handoff_queue',
    help: 'Connections waiting in the primary for a worker that can take them (balancing: primary).',
    registers: [this.registry],
  });
  readonly #elu = this.#perWorker(
    'flotilla_worker_event_loop_utilization',
    'Event-loop utilization of the worker over the last interval, 0 to 1.',
  );
  readonly #delayP50 = this.#perWorker(
    'flotilla_worker_event_loop_delay_p50_seconds',
    'Median event-loop delay of the worker over the last interval.',
  );
  readonly #delayP99 = this.#perWorker(
    'flotilla_worker_event_loop_delay_p99_seconds',
    '99th percentile of the event-loop delay of the worker over the last interval.',
  );
  readonly #delayMax = this.#perWorker(
    'flotilla_worker_event_loop_delay_max_seconds',
    'Longest event-loop delay of the worker over the last interval.',
  );
  readonly #rss = this.#perWorker('flotilla_worker_resident_memory_bytes', 'Resident set size of the worker.');
  readonly #heartbeatAge = this.#perWorker('flotilla_worker_heartbeat_age_seconds', 'Time since the worker last answered a heartbeat.');

  /**
   * Adds the primary's process metrics (`flotilla_primary_process_*`, `flotilla_primary_nodejs_*`):
   * called once the workers are forked, as the metrics endpoint starts, since prom-client's default
   * metrics are some 20 modules to load (see src/metrics/prom-client.ts).
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry, prefix: 'flotilla_primary_', eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
    withoutTotalGauges(this.registry, 'flotilla_primary_');
  }

  /** The vitals a worker reported (its heartbeat answer), under its slot. */
  observeWorker(slot: number, s: WorkerVitals): void {
    const worker = String(slot);
    this.#elu.set({ worker }, s.elu);
    this.#delayP50.set({ worker }, s.delayP50Ms / 1000);
    this.#delayP99.set({ worker }, s.delayP99Ms / 1000);
    this.#delayMax.set({ worker }, s.delayMaxMs / 1000);
    this.#rss.set({ worker }, s.rssBytes);
  }

  /** Time since the worker in `slot` last answered a heartbeat. */
  heartbeatAge(slot: number, ageMs: number): void {
    this.#heartbeatAge.set({ worker: String(slot) }, ageMs / 1000);
  }

  /** Removes the per-worker series of a slot no longer in use. */
  forgetWorker(slot: number): void {
    const worker = String(slot);
    for (const gauge of [this.#elu, this.#delayP50, this.#delayP99, this.#delayMax, this.#rss, this.#heartbeatAge])
      gauge.remove({ worker });
  }

  /** A gauge labelled by `worker`, the slot index (bounded by the cluster's size). */
  #perWorker(name: string, help: string): Gauge<'worker'> {
    return new Gauge({ name, help, labelNames: ['worker'], registers: [this.registry] });
  }
}
