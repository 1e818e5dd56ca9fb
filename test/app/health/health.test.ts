import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HealthChecker } from '../../../src/app/core/registrar.ts';
import { gate, testApp } from '../../helpers/app.ts';

const pass = (name: string): HealthChecker => ({ name, check: async () => {} });
const failing = (name: string, message: string): HealthChecker => ({
  name,
  check: async () => {
    throw new Error(message);
  },
});

describe('GET /health', () => {
  test('with no checkers: 200 pass as application/health+json, never cached', async () => {
    const { app } = testApp();
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/health+json');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), { status: 'pass', checks: {} });
  });

  test('all checkers pass: 200 with each check', async () => {
    const { app } = testApp();
    app.registerHealthChecker(pass('db'));
    app.registerHealthChecker(pass('cache'));
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.status, 'pass');
    assert.deepEqual(Object.keys(body.checks), ['db', 'cache']);
    assert.equal(body.checks.db.status, 'pass');
    assert.equal(typeof body.checks.db.durationMs, 'number');
    assert.equal(body.checks.db.output, undefined);
  });

  test('one failing checker: 503 naming it and its reason', async () => {
    const { app } = testApp();
    app.registerHealthChecker(pass('db'));
    app.registerHealthChecker(failing('cache', 'redis at 10.0.0.9 refused the connection'));
    app.registerHealthChecker({
      name: 'sync',
      check: () => {
        throw new Error('thrown before any promise');
      },
    });
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['content-type'], 'application/health+json');
    const body = res.json();
    assert.equal(body.status, 'fail');
    assert.equal(body.checks.db.status, 'pass');
    assert.deepEqual(
      { status: body.checks.cache.status, output: body.checks.cache.output },
      {
        status: 'fail',
        output: 'redis at 10.0.0.9 refused the connection',
      },
    );
    assert.equal(body.checks.sync.output, 'thrown before any promise');
  });

  test('failure reasons are hidden in production', async () => {
    const { app } = testApp({ env: 'production' });
    app.registerHealthChecker(failing('cache', 'redis at 10.0.0.9 refused the connection'));
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 503);
    assert.doesNotMatch(res.body, /redis|10\.0\.0\.9/);
    assert.deepEqual(Object.keys(res.json().checks.cache).sort(), ['durationMs', 'status']);
  });

  test('checkers run in parallel', async () => {
    const { app } = testApp({ health: { timeoutMs: 5_000 } });
    const started = { a: gate(), b: gate() };
    // each checker passes only once the other one has started: run one after the other, they would time out
    app.registerHealthChecker({
      name: 'a',
      check: async () => {
        started.a.resolve();
        await started.b.promise;
      },
    });
    app.registerHealthChecker({
      name: 'b',
      check: async () => {
        started.b.resolve();
        await started.a.promise;
      },
    });
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().status, 'pass');
  });

  test('a checker that does not answer in time fails with a timeout and sees its signal abort', async () => {
    const { app } = testApp({ health: { timeoutMs: 50 } });
    const aborted = gate<unknown>();
    app.registerHealthChecker(pass('fast'));
    app.registerHealthChecker({
      name: 'hangs',
      check: (signal) => {
        signal.addEventListener('abort', () => aborted.resolve(signal.reason));
        return new Promise(() => {});
      },
    });
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 503);
    const body = res.json();
    assert.equal(body.checks.fast.status, 'pass');
    assert.equal(body.checks.hangs.status, 'fail');
    assert.equal(body.checks.hangs.output, 'timed out after 50 ms');
    assert.match(String(await aborted.promise), /timed out after 50 ms/);
  });

  test('answers 503 once shutting down, without running the checkers', async () => {
    const { app } = testApp();
    let ran = 0;
    app.registerHealthChecker({
      name: 'db',
      check: async () => {
        ran++;
      },
    });
    assert.equal((await app.inject('/health')).statusCode, 200);
    await app.close();
    const res = await app.inject('/health');
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['connection'], 'close');
    assert.deepEqual(res.json(), { status: 'fail', checks: {}, output: 'shutting down' });
    assert.equal(ran, 1);
  });

  test('HEAD /health answers the status without a body', async () => {
    const { app } = testApp();
    app.registerHealthChecker(failing('db', 'down'));
    const res = await app.inject({ method: 'HEAD', url: '/health' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.body, '');
  });
});
