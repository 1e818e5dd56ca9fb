import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Route } from '../../src/app/core/route.ts';
import { KError } from '../../src/errors/k-error.ts';
import type { InjectResponse } from '../../src/index.ts';
import { controller, testApp } from '../helpers/app.ts';

/**
 * A secret planted in thrown errors, rejections, health checker failures and
 * validation steps: with `env: 'production'` it appears in no response body
 * and no response header, and it does appear in the logs, on a line carrying
 * the request id of the response.
 */

const SECRET = `postgres://app:${randomUUID()}@db.internal/books`;

const secretError = () => new Error(`connection to ${SECRET} refused`);

const ROUTES: Route[] = [
  {
    method: 'GET',
    path: '/throw',
    handler: () => {
      throw secretError();
    },
  },
  { method: 'GET', path: '/reject', handler: async () => Promise.reject(secretError()) },
  {
    method: 'GET',
    path: '/string',
    handler: () => {
      throw `raw ${SECRET}`;
    },
  },
  {
    method: 'GET',
    path: '/http-like',
    handler: () => {
      // looks like an HTTP error from another library: its status and headers are not trusted
      throw Object.assign(secretError(), { status: 400, statusCode: 400, headers: { 'x-debug': SECRET }, expose: true });
    },
  },
  {
    method: 'GET',
    path: '/internal-cause',
    handler: () => {
      throw KError.internal('the catalogue is unavailable', { cause: secretError() });
    },
  },
  {
    method: 'GET',
    path: '/unavailable-cause',
    handler: () => Promise.reject(KError.unavailable('try again later', { cause: secretError() })),
  },
  {
    method: 'GET',
    path: '/unserializable',
    handler: () => ({
      toJSON() {
        throw secretError();
      },
    }),
  },
  {
    method: 'GET',
    path: '/middleware',
    middlewares: [
      async () => {
        throw secretError();
      },
    ],
    handler: () => ({ unreachable: true }),
  },
  {
    method: 'POST',
    path: '/validated',
    schema: { body: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } },
    middlewares: [
      async (ctx, next) => {
        // a validation step of the service's own, after the route's schemas passed
        if (ctx.headers['x-token'] !== undefined) throw new Error(`token check against ${SECRET} failed`);
        await next();
      },
    ],
    handler: (ctx) => {
      if ((ctx.body as { token: string }).token !== 'ok') throw new TypeError(`cannot verify with ${SECRET}`);
      return { verified: true };
    },
  },
];

function assertHidden(res: InjectResponse, what: string): void {
  assert.ok(!res.body.includes(SECRET) && !res.body.includes('db.internal'), `${what}: the body shows the secret: ${res.body}`);
  for (const [name, value] of Object.entries(res.headers)) {
    assert.ok(!String(value).includes(SECRET) && !String(value).includes('db.internal'), `${what}: header ${name} shows the secret`);
  }
}

test('production: a secret in a thrown error reaches no response, and is logged with the request id', async () => {
  const { app, logs } = testApp({ env: 'production' });
  app.registerController(controller(...ROUTES));
  const requests = [
    ...ROUTES.filter((r) => r.method === 'GET').map((r) => ({ method: 'GET' as const, url: r.path })),
    {
      method: 'POST' as const,
      url: '/validated',
      headers: { 'content-type': 'application/json', 'x-token': 'a' },
      payload: '{"token":"ok"}',
    },
    { method: 'POST' as const, url: '/validated', headers: { 'content-type': 'application/json' }, payload: '{"token":"forged"}' },
  ];
  for (const request of requests) {
    const res = await app.inject(request);
    const what = `${request.method} ${request.url}`;
    assert.equal(res.statusCode >= 500, true, `${what}: ${res.statusCode}`);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assertHidden(res, what);
    const requestId = res.headers['x-request-id'];
    assert.equal(res.json().requestId, requestId);
    const line = logs.lines.find((l) => l['requestId'] === requestId && JSON.stringify(l).includes(SECRET));
    assert.equal(line?.['level'], 'error', `${what}: the secret is not logged with the request id`);
  }
});

test('production: a failing health checker hides its reason from /health and logs it with the request id', async () => {
  const { app, logs } = testApp({ env: 'production', health: { timeoutMs: 100 } });
  app.registerHealthChecker({ name: 'db', check: async () => Promise.reject(secretError()) });
  app.registerHealthChecker({
    name: 'cache',
    check: () => {
      throw secretError();
    },
  });
  app.registerHealthChecker({ name: 'queue', check: () => Promise.reject(`queue at ${SECRET} is down`) });
  const res = await app.inject('/health');
  assert.equal(res.statusCode, 503);
  assertHidden(res, 'GET /health');
  const report = res.json();
  assert.deepEqual(Object.keys(report.checks).sort(), ['cache', 'db', 'queue']);
  for (const check of Object.values(report.checks) as { status: string; output?: string }[]) {
    assert.equal(check.status, 'fail');
    assert.equal(check.output, undefined);
  }
  const requestId = res.headers['x-request-id'];
  for (const name of ['db', 'cache', 'queue']) {
    const line = logs.lines.find((l) => l['check'] === name && l['requestId'] === requestId);
    assert.ok(line !== undefined && JSON.stringify(line).includes(SECRET), `the ${name} failure is not logged with its reason`);
  }
});

test('production: validation problems and 4xx KErrors carry no cause', async () => {
  const { app } = testApp({ env: 'production' });
  app.registerController(
    controller(...ROUTES, {
      method: 'GET',
      path: '/forbidden',
      handler: () => {
        throw KError.forbidden('not yours', { cause: secretError() });
      },
    }),
  );
  const schemaFailure = await app.inject({
    method: 'POST',
    url: '/validated',
    headers: { 'content-type': 'application/json' },
    payload: '{}',
  });
  assert.equal(schemaFailure.statusCode, 400);
  assert.equal(schemaFailure.json().code, 'VALIDATION_FAILED');
  assertHidden(schemaFailure, 'schema failure');
  const forbidden = await app.inject('/forbidden');
  assert.equal(forbidden.statusCode, 403);
  assert.equal(forbidden.json().detail, 'not yours');
  assertHidden(forbidden, 'a 403 with a cause');
});
