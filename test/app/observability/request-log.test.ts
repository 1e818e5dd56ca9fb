import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, testApp } from '../../helpers/app.ts';

const isRequestLine = (l: Record<string, unknown>) => l['msg'] === 'request completed';

describe('request logging', () => {
  test('one JSON line per request with method, route template, path, status, duration and request id', async () => {
    const { app, logs } = testApp();
    app.registerController(controller({ method: 'GET', path: '/books/:id', handler: (ctx) => ({ id: ctx.params['id'] }) }));
    const res = await app.inject({ url: '/books/42?fields=title', headers: { 'x-request-id': 'req-42' } });
    assert.equal(res.statusCode, 200);
    const line = await logs.waitFor(isRequestLine);
    assert.equal(line['level'], 'info');
    assert.equal(line['method'], 'GET');
    assert.equal(line['route'], '/books/:id');
    assert.equal(line['path'], '/books/42');
    assert.equal(line['status'], 200);
    assert.equal(line['requestId'], 'req-42');
    assert.equal(typeof line['durationMs'], 'number');
    assert.ok((line['durationMs'] as number) >= 0);
    assert.equal(logs.lines.filter(isRequestLine).length, 1);
  });

  test('problems are logged with their status; unmatched requests with a fixed route label', async () => {
    const { app, logs } = testApp();
    app.registerController(
      controller({
        method: 'DELETE',
        path: '/books/:id',
        handler: () => {
          throw KError.conflict();
        },
      }),
    );
    await app.inject({ method: 'DELETE', url: '/books/1' });
    await app.inject('/random/path/123');
    await app.inject({ method: 'PUT', url: '/books/1' });
    const lines = logs.lines.filter(isRequestLine);
    assert.deepEqual(
      lines.map((l) => [l['method'], l['route'], l['path'], l['status']]),
      [
        ['DELETE', '/books/:id', '/books/1', 409],
        ['GET', 'unmatched', '/random/path/123', 404],
        ['PUT', 'unmatched', '/books/1', 405],
      ],
    );
  });

  test('logging.requests: false logs no request lines', async () => {
    const { app, logs } = testApp({ logging: { requests: false } });
    await app.inject('/health');
    app.logger.info('marker');
    await logs.waitFor((l) => l['msg'] === 'marker');
    assert.equal(logs.lines.filter(isRequestLine).length, 0);
  });

  test('logging.level hides lines below it', async () => {
    const { app, logs } = testApp({ logging: { level: 'warn' } });
    await app.inject('/health');
    app.logger.warn('marker');
    await logs.waitFor((l) => l['msg'] === 'marker');
    assert.equal(logs.lines.filter(isRequestLine).length, 0);
  });

  test('ctx.logger lines carry the request id, and authorization and cookie headers are redacted', async () => {
    const { app, logs } = testApp();
    app.registerController(
      controller({
        method: 'GET',
        path: '/me',
        handler: (ctx) => {
          ctx.logger.info({ headers: ctx.headers }, 'headers as they came');
          ctx.logger.info({ req: { headers: ctx.headers } }, 'request object');
          ctx.context().logger.info({ upstream: { headers: { authorization: 'Bearer upstream-token' } } }, 'nested');
          return 'ok';
        },
      }),
    );
    await app.inject({
      url: '/me',
      headers: { authorization: 'Bearer top-secret-token', cookie: 'session=s3cr3t', 'x-request-id': 'rid-1', accept: 'application/json' },
    });
    const direct = await logs.waitFor((l) => l['msg'] === 'headers as they came');
    const viaReq = await logs.waitFor((l) => l['msg'] === 'request object');
    const nested = await logs.waitFor((l) => l['msg'] === 'nested');
    for (const line of [direct, viaReq, nested]) assert.equal(line['requestId'], 'rid-1');
    const headers = direct['headers'] as Record<string, string>;
    assert.equal(headers['authorization'], '[redacted]');
    assert.equal(headers['cookie'], '[redacted]');
    assert.equal(headers['accept'], 'application/json');
    const reqHeaders = (viaReq['req'] as { headers: Record<string, string> }).headers;
    assert.equal(reqHeaders['authorization'], '[redacted]');
    assert.equal(reqHeaders['cookie'], '[redacted]');
    assert.equal((nested['upstream'] as { headers: Record<string, string> }).headers['authorization'], '[redacted]');
    const all = logs.lines.map((l) => JSON.stringify(l)).join('\n');
    assert.doesNotMatch(all, /top-secret-token|s3cr3t|upstream-token/);
  });

  test('every line names the service', async () => {
    const { app, logs } = testApp({ serviceName: 'books-api' });
    await app.inject('/health');
    const line = await logs.waitFor(isRequestLine);
    assert.equal(line['service'], 'books-api');
    assert.equal(line['pid'], process.pid);
    assert.match(String(line['time']), /^\d{4}-\d\d-\d\dT/);
  });
});
