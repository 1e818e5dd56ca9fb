import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** The primary's own metrics: workers up, restarts by reason, scrape completeness, its process. */
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
  readonly scrapeMissing = new Gauge({
    name: 'flotilla_scrape_workers_missing',
    help: 'Workers that did not answer the last metrics scrape in time (their series are absent from it).',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'flotilla_primary_' });
  }
}
