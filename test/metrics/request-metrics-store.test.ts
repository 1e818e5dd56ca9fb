import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RequestMetricsStore } from '../../src/metrics/request-metrics-store.ts';

describe('RequestMetricsStore', () => {
  it('keeps one series per method, route and status, in first-seen order', () => {
    const store = new RequestMetricsStore([0.1, 1]);
    store.record('GET', '/b', 200, 0.5);
    store.record('GET', '/a', 200, 0.05);
    store.record('GET', '/b', 200, 2);
    store.record('GET', '/b', 404, 0);
    assert.deepEqual(
      store.counted.map((s) => [s.labels, s.requests.value]),
      [
        [{ method: 'GET', route: '/b', status: '200' }, 2],
        [{ method: 'GET', route: '/a', status: '200' }, 1],
        [{ method: 'GET', route: '/b', status: '404' }, 1],
      ],
    );
    const [b] = store.observed;
    assert.deepEqual([b?.count, b?.sum, [...(b?.buckets ?? [])]], [2, 2.5, [0, 1]], 'per bucket, not cumulative; 2 s above every bound');
  });

  it('counts bounds equal as strings once, and a value above them all in a bound -1, as prom-client does', () => {
    const store = new RequestMetricsStore([1, -1, 1, -0, 0]);
    assert.deepEqual([...store.slots], [0, 1, 0, 2, 2, 1]);
    store.record('GET', '/', 200, 5);
    store.record('GET', '/', 200, 0);
    assert.deepEqual([...(store.observed[0]?.buckets ?? [])], [1, 1, 0]);
  });

  it('resets the counter and the histogram apart, each starting afresh', () => {
    const store = new RequestMetricsStore([1]);
    store.record('GET', '/a', 200, 0.5);
    store.record('GET', '/b', 200, 0.5);
    const before = store.counted[0]?.requests;
    store.resetRequests();
    assert.deepEqual([store.counted.length, store.observed.length], [0, 2]);
    store.count('GET', '/b', 200);
    store.count('GET', '/a', 200);
    assert.deepEqual(
      store.counted.map((s) => s.labels.route),
      ['/b', '/a'],
      'the counter orders series from its reset',
    );
    assert.notEqual(store.counted[1]?.requests, before, 'a new sample, as prom-client makes one');
    store.resetDurations();
    assert.equal(store.observed.length, 0);
    store.observe('GET', '/a', 200, 2);
    assert.deepEqual([store.observed[0]?.count, store.observed[0]?.sum, [...(store.observed[0]?.buckets ?? [])]], [1, 2, [0]]);
    assert.equal(store.counted[1]?.requests.value, 1, 'the counter untouched by the histogram');
  });
});
