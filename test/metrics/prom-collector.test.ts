import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { PromMetricsCollector } from '../../src/metrics/prom-collector.ts';
import { collectorContract } from './collector-contract.ts';

collectorContract('PromMetricsCollector', () => new PromMetricsCollector(new Registry()));

/** The value of the line `<name>{<labels>}` in the Prometheus text, labels in the order given. */
async function sample(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const key = `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}} `;
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(key));
  return line === undefined ? undefined : Number(line.slice(key.length));
}

describe('PromMetricsCollector', () => {
  it('counts requests by method, route template and status', async () => {
    const collector = new PromMetricsCollector(new Registry());
    collector.recordRequest({ method: 'GET', route: '/books/:id', status: 200, durationMs: 4 });
    collector.recordRequest({ method: 'GET', route: '/books/:id', status: 200, durationMs: 6 });
    collector.recordRequest({ method: 'GET', route: '/books/:id', status: 404, durationMs: 1 });
    collector.recordRequest({ method: 'POST', route: '/books', status: 201, durationMs: 30 });
    const { registry } = collector;
    const total = (labels: Record<string, string>) => sample(registry, 'http_requests_total', labels);
    assert.equal(await total({ method: 'GET', route: '/books/:id', status: '200' }), 2);
    assert.equal(await total({ method: 'GET', route: '/books/:id', status: '404' }), 1);
    assert.equal(await total({ method: 'POST', route: '/books', status: '201' }), 1);
    assert.doesNotMatch(await registry.metrics(), /route="\/books\/\d/);
  });

  it('observes durations in seconds, in HTTP API buckets', async () => {
    const collector = new PromMetricsCollector(new Registry());
    collector.recordRequest({ method: 'GET', route: '/slow', status: 200, durationMs: 250 });
    collector.recordRequest({ method: 'GET', route: '/slow', status: 200, durationMs: 7 });
    const labels = { method: 'GET', route: '/slow', status: '200' };
    const bucket = (le: string) => sample(collector.registry, 'http_request_duration_seconds_bucket', { le, ...labels });
    assert.equal(await bucket('0.005'), 0);
    assert.equal(await bucket('0.01'), 1);
    assert.equal(await bucket('0.1'), 1);
    assert.equal(await bucket('0.25'), 2);
    assert.equal(await bucket('10'), 2);
    assert.equal(await bucket('+Inf'), 2);
    assert.equal(await sample(collector.registry, 'http_request_duration_seconds_sum', labels), 0.257);
    assert.equal(await sample(collector.registry, 'http_request_duration_seconds_count', labels), 2);
  });

  it('records a non-finite or negative duration as 0', async () => {
    const collector = new PromMetricsCollector(new Registry());
    collector.recordRequest({ method: 'GET', route: '/x', status: 200, durationMs: Number.NaN });
    collector.recordRequest({ method: 'GET', route: '/x', status: 200, durationMs: -5 });
    const labels = { method: 'GET', route: '/x', status: '200' };
    assert.equal(await sample(collector.registry, 'http_request_duration_seconds_count', labels), 2);
    assert.equal(await sample(collector.registry, 'http_request_duration_seconds_sum', labels), 0);
  });

  it('takes custom buckets', async () => {
    const collector = new PromMetricsCollector(new Registry(), { buckets: [0.5, 2] });
    collector.recordRequest({ method: 'GET', route: '/', status: 200, durationMs: 1_000 });
    const text = await collector.registry.metrics();
    assert.match(text, /http_request_duration_seconds_bucket\{le="2",method="GET",route="\/",status="200"\} 1/);
    assert.doesNotMatch(text, /le="0.005"/);
  });

  it('shares the metrics of a registry it is given twice', async () => {
    const registry = new Registry();
    new PromMetricsCollector(registry).recordRequest({ method: 'GET', route: '/', status: 200, durationMs: 1 });
    new PromMetricsCollector(registry).recordRequest({ method: 'GET', route: '/', status: 200, durationMs: 1 });
    assert.equal(await sample(registry, 'http_requests_total', { method: 'GET', route: '/', status: '200' }), 2);
  });

  it('refuses a registry holding another metric under its names', () => {
    const registry = new Registry();
    new Gauge({ name: 'http_requests_total', help: 'not a counter', registers: [registry] });
    assert.throws(() => new PromMetricsCollector(registry), { name: 'TypeError', message: /http_requests_total is already registered/ });
  });
});

describe('PromMetricsCollector on a registry it shares', () => {
  it('starts from nothing after registry.resetMetrics(), as prom-client metrics do', async () => {
    const collector = new PromMetricsCollector(new Registry());
    collector.recordRequest({ method: 'GET', route: '/a', status: 200, durationMs: 3 });
    collector.registry.resetMetrics();
    assert.doesNotMatch(await collector.registry.metrics(), /route=/);
    collector.recordRequest({ method: 'GET', route: '/b', status: 200, durationMs: 3 });
    collector.recordRequest({ method: 'GET', route: '/a', status: 200, durationMs: 3 });
    const labels = { method: 'GET', route: '/a', status: '200' };
    assert.equal(await sample(collector.registry, 'http_requests_total', labels), 1);
    assert.equal(await sample(collector.registry, 'http_request_duration_seconds_count', labels), 1);
    assert.match(await collector.registry.metrics(), /route="\/b"[\s\S]*route="\/a"/, 'series in first-seen order since the reset');
  });

  it('feeds a prom-client Counter and Histogram registered under its names', async () => {
    const registry = new Registry();
    const labelNames = ['method', 'route', 'status'];
    const counter = new Counter({ name: 'http_requests_total', help: 'mine', labelNames, registers: [registry] });
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'mine',
      labelNames,
      buckets: [1],
      registers: [registry],
    });
    new PromMetricsCollector(registry).recordRequest({ method: 'GET', route: '/', status: 200, durationMs: Number.NaN });
    assert.deepEqual((await counter.get()).values, [{ value: 1, labels: { method: 'GET', route: '/', status: '200' } }]);
    assert.equal((await histogram.get()).values.find((v) => v.metricName === 'http_request_duration_seconds_sum')?.value, 0);
  });

  it('registers a new counter beside the histogram of another collector when the counter was removed', async () => {
    const registry = new Registry();
    const first = new PromMetricsCollector(registry);
    registry.removeSingleMetric('http_requests_total');
    const second = new PromMetricsCollector(registry);
    first.recordRequest({ method: 'GET', route: '/', status: 200, durationMs: 1 });
    second.recordRequest({ method: 'GET', route: '/', status: 200, durationMs: 1 });
    const labels = { method: 'GET', route: '/', status: '200' };
    assert.equal(await sample(registry, 'http_requests_total', labels), 1);
    assert.equal(await sample(registry, 'http_request_duration_seconds_count', labels), 2);
  });
});
