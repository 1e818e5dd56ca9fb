import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from '../helpers/app.ts';

/**
 * What broke: why a health checker failed was never logged; in production,
 * where the reason is left out of the `/health` body, it was lost. A checker
 * rejecting with a value that throws when read also turned `/health` into a
 * 500. Now every failure is logged with the check's name and the request id,
 * and `/health` stays a 503.
 */

test('a failing health checker is logged with its reason and the request id, in production too', async () => {
  for (const env of ['development', 'production'] as const) {
    const { app, logs } = testApp({ env, health: { timeoutMs: 50 } });
    app.registerHealthChecker({ name: 'db', check: () => Promise.reject(new Error('connection refused by db-7')) });
    app.registerHealthChecker({ name: 'slow', check: () => new Promise(() => {}) });
    app.registerHealthChecker({ name: 'odd', check: () => Promise.reject(Object.create(null)) });
    app.registerHealthChecker({ name: 'fine', check: async () => {} });
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 503);
    const report = res.json();
    assert.equal(report.checks.fine.status, 'pass');
    assert.equal(report.checks.odd.status, 'fail');
    assert.equal(report.checks.db.output, env === 'production' ? undefined : 'connection refused by db-7');
    const requestId = res.headers['x-request-id'];
    const failed = (check: string) => logs.lines.find((l) => l['msg'] === 'health check failed' && l['check'] === check) ?? {};
    const db = failed('db');
    assert.equal(db['requestId'], requestId);
    assert.equal(db['level'], 'warn');
    assert.match(String((db['err'] as { message?: string }).message), /connection refused by db-7/);
    assert.match(String((failed('slow')['err'] as { message?: string }).message), /timed out after 50 ms/);
    assert.equal(failed('odd')['requestId'], requestId);
    assert.equal(
      logs.lines.some((l) => l['msg'] === 'health check failed' && l['check'] === 'fine'),
      false,
    );
  }
});
