import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { DocumentedRoute } from '../../src/app/core/route-schemas.ts';
import { buildOpenApi } from '../../src/app/openapi/openapi.ts';
import { defineRoute } from '../../src/app/typed/define-route.ts';
import { resolveConfig } from '../../src/config/validate.ts';
import { FlotillaError } from '../../src/errors/flotilla-error.ts';
import type { KConfig } from '../../src/index.ts';
import { controller, testApp } from '../helpers/app.ts';

const handler = () => 'ok';

const docs = {
  securitySchemes: {
    apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    basic: { type: 'http', scheme: 'basic' },
    oauth: {
      type: 'oauth2',
      flows: {
        authorizationCode: {
          authorizationUrl: 'https://auth.example.com/authorize',
          tokenUrl: 'https://auth.example.com/token',
          scopes: { 'books:read': 'Read books', 'books:write': 'Add books' },
        },
      },
    },
    oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://auth.example.com/.well-known/openid-configuration' },
  },
} as const satisfies KConfig['docs'];

function app(extra: KConfig['docs'] = {}) {
  return testApp({ logging: { level: 'silent' }, docs: { ...docs, ...extra } }).app;
}

/** The FLO_ERR_BAD_SECURITY message `register` throws. */
function refusal(register: () => unknown): string {
  try {
    register();
  } catch (error) {
    assert.ok(error instanceof FlotillaError, String(error));
    assert.equal(error.code, 'FLO_ERR_BAD_SECURITY');
    return error.message;
  }
  assert.fail('expected FLO_ERR_BAD_SECURITY');
}

describe('security in the OpenAPI document', () => {
  test("the config's schemes are components.securitySchemes; a route's security is its operation's", async () => {
    const a = app();
    a.registerController(
      controller(
        { method: 'GET', path: '/books', handler, security: [] },
        { method: 'POST', path: '/books', handler, security: [{ apiKey: [] }, { oauth: ['books:write'] }] },
        { method: 'DELETE', path: '/books/:id', handler, security: [{ apiKey: [], bearer: [] }] },
        { method: 'GET', path: '/me', handler, security: [{ oidc: ['profile'] }, {}] },
        { method: 'GET', path: '/loose', handler },
      ),
    );
    const doc = a.openapi();
    assert.deepEqual(doc.components.securitySchemes, docs.securitySchemes);
    assert.equal(doc.security, undefined, 'no document default unless docs.security says one');
    assert.deepEqual(doc.paths['/books']?.get?.security, []);
    assert.deepEqual(doc.paths['/books']?.post?.security, [{ apiKey: [] }, { oauth: ['books:write'] }]);
    assert.deepEqual(doc.paths['/books/{id}']?.delete?.security, [{ apiKey: [], bearer: [] }]);
    assert.deepEqual(doc.paths['/me']?.get?.security, [{ oidc: ['profile'] }, {}]);
    assert.equal(doc.paths['/loose']?.get?.security, undefined);
    await SwaggerParser.validate(structuredClone(doc) as never);
    await a.close();
  });

  test('defineRoute takes security too, and its handler stays typed', async () => {
    const a = app();
    const route = defineRoute({
      method: 'POST',
      path: '/books/:id/loans',
      security: [{ oauth: ['books:write'] }],
      handler: (ctx) => ({ id: ctx.params.id }),
    });
    a.registerController(controller(route));
    assert.deepEqual(a.openapi().paths['/books/{id}/loans']?.post?.security, [{ oauth: ['books:write'] }]);
    await a.close();
  });

  test('docs.security is the document default; /health declares none needed', async () => {
    const a = app({ security: [{ bearer: [] }] });
    a.registerController(controller({ method: 'GET', path: '/books', handler }));
    const doc = a.openapi();
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    assert.equal(doc.paths['/books']?.get?.security, undefined, 'inherits the default');
    assert.deepEqual(doc.paths['/health']?.get?.security, []);
    await SwaggerParser.validate(structuredClone(doc) as never);
    await a.close();
  });

  test('the built-in routes declare security: [] (the docs routes too, though hidden)', async () => {
    const a = app();
    const builtIn = a.routes.filter((r) => r.path === '/health' || r.path.startsWith('/docs'));
    assert.ok(builtIn.length > 3);
    for (const route of builtIn) assert.deepEqual(route.security, [], `${route.method} ${route.path}`);
    await a.close();
  });

  test("a group's security applies to its routes that declare none, and to its subgroups unless they say otherwise", async () => {
    const a = app();
    const admin = a.group('/admin', { security: [{ bearer: [] }] });
    admin.registerController(
      controller({ method: 'GET', path: '/users', handler }, { method: 'GET', path: '/open', handler, security: [] }),
    );
    admin.group('/reports').registerController(controller({ method: 'GET', path: '/daily', handler }));
    admin.group('/partners', { security: [{ basic: [] }] }).registerController(controller({ method: 'GET', path: '/list', handler }));
    const doc = a.openapi();
    assert.deepEqual(doc.paths['/admin/users']?.get?.security, [{ bearer: [] }]);
    assert.deepEqual(doc.paths['/admin/open']?.get?.security, []);
    assert.deepEqual(doc.paths['/admin/reports/daily']?.get?.security, [{ bearer: [] }]);
    assert.deepEqual(doc.paths['/admin/partners/list']?.get?.security, [{ basic: [] }]);
    await a.close();
  });

  test("a group's options come before its middlewares, which still run", async () => {
    const a = app();
    const seen: string[] = [];
    const api = a.group('/api', { security: [{ apiKey: [] }] }, async (_ctx, next) => {
      seen.push('group');
      await next();
    });
    api.registerController(controller({ method: 'GET', path: '/x', handler }));
    assert.equal((await a.inject('/api/x')).statusCode, 200);
    assert.deepEqual(seen, ['group']);
    assert.deepEqual(a.openapi().paths['/api/x']?.get?.security, [{ apiKey: [] }]);
    await a.close();
  });

  test('a route naming an undeclared scheme, or an undeclared oauth2 scope, is refused when registered', async () => {
    const a = app();
    assert.equal(
      refusal(() => a.registerController(controller({ method: 'POST', path: '/books', handler, security: [{ apikey: [] }] }))),
      "route POST /books: security[0].apikey names the security scheme 'apikey', which docs.securitySchemes does not declare (declared: apiKey, bearer, basic, oauth, oidc)",
    );
    assert.match(
      refusal(() =>
        a.group('/v1').registerController(controller({ method: 'PUT', path: '/x', handler, security: [{ oauth: ['admin'] }] })),
      ),
      /^route PUT \/v1\/x: security\[0\]\.oauth names scope 'admin' that no flow of the oauth2 scheme 'oauth' declares$/,
    );
    assert.match(
      refusal(() => a.group('/admin', { security: [{ jwt: [] }] })),
      /^group '\/admin': security\[0\]\.jwt names the security scheme 'jwt'/,
    );
    assert.match(
      refusal(() => a.registerController(controller({ method: 'GET', path: '/y', handler, security: { apiKey: [] } as never }))),
      /^route GET \/y: security must be a list of security requirements/,
    );
    // nothing of a refused route was registered
    assert.equal((await a.inject({ method: 'POST', url: '/books' })).statusCode, 404);
    await a.close();
  });

  test('without any declared scheme, naming one says so', async () => {
    const { app: bare } = testApp({ logging: { level: 'silent' } });
    assert.match(
      refusal(() => bare.registerController(controller({ method: 'GET', path: '/x', handler, security: [{ apiKey: [] }] }))),
      /\(declared: none\)$/,
    );
    await bare.close();
  });

  test('buildOpenApi checks routes handed to it directly', () => {
    const routes: DocumentedRoute[] = [{ method: 'GET', path: '/x', handler, security: [{ nope: [] }] }];
    assert.throws(
      () => buildOpenApi(resolveConfig({ docs }), routes),
      /route GET \/x: security\[0\]\.nope names the security scheme 'nope'/,
    );
  });

  test('unused component schemas are left out; a validation problem refers to ValidationIssue', () => {
    const config = resolveConfig({ docs });
    assert.deepEqual(buildOpenApi(config, []).components.schemas, {});
    const plain = buildOpenApi(config, [{ method: 'GET', path: '/x', handler }]);
    assert.deepEqual(Object.keys(plain.components.schemas), ['Problem', 'ValidationIssue']);
    const details = (plain.components.schemas['Problem'] as { properties: Record<string, { properties?: unknown }> }).properties['details'];
    assert.deepEqual(details?.properties, { errors: { type: 'array', items: { $ref: '#/components/schemas/ValidationIssue' } } });
  });

  test('an unknown group option is refused, naming it', async () => {
    const a = app();
    assert.throws(
      () => a.group('/x', { securty: [] } as never),
      /group '\/x': unknown option 'securty' \(known: security, rateLimit, onRequest\)/,
    );
    assert.throws(() => a.group('/x').group('/y', { rateLimt: 1 } as never), /group '\/x\/y': unknown option 'rateLimt'/);
    await a.close();
  });
});
