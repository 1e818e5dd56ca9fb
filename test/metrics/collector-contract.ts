import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MetricsCollector, RequestMetric } from '../../src/metrics/metrics-collector.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];
const STATUSES = [200, 201, 204, 301, 304, 400, 404, 405, 413, 415, 500, 503];

/**
 * What the App relies on from any {@link MetricsCollector}: `recordRequest` is
 * synchronous, cheap, and never throws, whatever the measurement.
 *
 * @example
 * collectorContract('PromMetricsCollector', () => new PromMetricsCollector(new Registry()));
 */
export function collectorContract(name: string, make: () => MetricsCollector): void {
  describe(`MetricsCollector contract: ${name}`, () => {
    it('records synchronously', () => {
      const result: unknown = make().recordRequest({ method: 'GET', route: '/books/:id', status: 200, durationMs: 3.2 });
      assert.equal(result, undefined);
    });

    it('records many label combinations', () => {
      const collector = make();
      for (const method of METHODS)
        for (const status of STATUSES)
          for (let r = 0; r < 40; r++) collector.recordRequest({ method, route: `/r${r}/:id`, status, durationMs: r * 7.5 });
    });

    it('never throws on odd measurements', () => {
      const collector = make();
      const odd: RequestMetric[] = [
        { method: 'GET', route: '/x', status: 200, durationMs: 0 },
        { method: 'GET', route: '/x', status: 200, durationMs: -1 },
        { method: 'GET', route: '/x', status: 200, durationMs: Number.NaN },
        { method: 'GET', route: '/x', status: 200, durationMs: Number.POSITIVE_INFINITY },
        { method: 'GET', route: '/x', status: 200, durationMs: 3_600_000 },
        { method: 'BREW', route: '', status: 999, durationMs: 1 },
        { method: 'GET', route: '/quote"back\\slash\nnewline/ünïcödé', status: 418, durationMs: 1 },
      ];
      for (const m of odd) collector.recordRequest(m);
    });

    it('is cheap enough for the request path', () => {
      const collector = make();
      const started = performance.now();
      for (let i = 0; i < 20_000; i++) {
        collector.recordRequest({ method: 'GET', route: `/r${i % 20}/:id`, status: i % 9 === 0 ? 404 : 200, durationMs: i % 250 });
      }
      // ≈ 1 µs a call is expected; the bound only catches pathological costs.
      assert.ok(performance.now() - started < 1_000, 'recordRequest takes 50 µs or more a call');
    });
  });
}
