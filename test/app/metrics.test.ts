import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KConfig } from '../../src/config/types.ts';
import type { RequestMetric } from '../../src/metrics/metrics-collector.ts';
import { controller, serve, testApp } from '../helpers/app.ts';
import { connectionRefused, httpRequest } from '../helpers/http.ts';

function booksApp(config: KConfig = {}) {
  const { app } = testApp(config);
  app.registerController(controller({ method: 'GET', path: '/books/:id', handler: (ctx) => ({ id: ctx.params['id'] }) }));
  return app;
}

describe('request metrics', () => {
  test('the default collector counts requests and durations by route template, never the raw URL', async () => {
    const app = booksApp();
    await app.inject('/books/1');
    await app.inject('/books/2?x=secret');
    await app.inject('/no/such/thing/123');
    const text = await app.registry.metrics();
    assert.match(text, /^http_requests_total\{method="GET",route="\/books\/:id",status="200"\} 2$/m);
    assert.match(text, /^http_request_duration_seconds_count\{method="GET",route="\/books\/:id",status="200"\} 2$/m);
    assert.match(text, /^http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/books\/:id",status="200"\} \d+$/m);
    assert.match(text, /^http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m);
    assert.doesNotMatch(text, /\/books\/1|\/books\/2|secret|\/no\/such/);
  });

  test('setMetricsCollector swaps the collector', async () => {
    const app = booksApp();
    const seen: RequestMetric[] = [];
    app.setMetricsCollector({ recordRequest: (m) => seen.push(m) });
    await app.inject({ method: 'GET', url: '/books/7' });
    await app.inject({ method: 'POST', url: '/books/7' });
    assert.deepEqual(
      seen.map(({ method, route, status }) => ({ method, route, status })),
      [
        { method: 'GET', route: '/books/:id', status: 200 },
        { method: 'POST', route: 'unmatched', status: 405 },
      ],
    );
    for (const m of seen) assert.ok(m.durationMs >= 0 && Number.isFinite(m.durationMs));
    assert.doesNotMatch(await app.registry.metrics(), /http_requests_total\{/);
  });

  test('metrics.enabled: false records nothing', async () => {
    const app = booksApp({ metrics: { enabled: false } });
    await app.inject('/books/1');
    assert.doesNotMatch(await app.registry.metrics(), /http_requests_total/);
  });

  test('a standalone App without metrics config serves no metrics endpoint', async (t) => {
    const app = booksApp();
    await serve(t, app);
    assert.equal(app.metricsPort, undefined);
  });

  test('a standalone App given metrics serves its own registry over HTTP, until it closes', async () => {
    const app = booksApp({ metrics: { port: 0, host: '127.0.0.1', path: '/prom' } });
    const listening = app.listen();
    const { port } = await app.ready();
    const metricsPort = app.metricsPort;
    assert.ok(metricsPort);
    assert.notEqual(metricsPort, port);

    await httpRequest(port, '/books/5');
    const scrape = await httpRequest(metricsPort, '/prom');
    assert.equal(scrape.status, 200);
    assert.match(String(scrape.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(scrape.body, /^http_requests_total\{method="GET",route="\/books\/:id",status="200"\} 1$/m);
    assert.match(scrape.body, /^process_cpu_user_seconds_total /m);
    assert.equal((await httpRequest(metricsPort, '/metrics')).status, 404);
    assert.equal((await httpRequest(metricsPort, '/prom', { method: 'POST' })).status, 404);

    await app.close();
    await listening;
    assert.equal(await connectionRefused(metricsPort), true);
  });
});
