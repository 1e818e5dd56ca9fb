import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { App } from '../../../src/app/app.ts';
import { jwtAuth } from '../../../src/app/auth/jwt-auth.ts';
import type { Route } from '../../../src/app/core/route.ts';
import type { DocumentedRoute } from '../../../src/app/core/route-schemas.ts';
import { buildOpenApi, type OpenApiDocument, parseServer } from '../../../src/app/openapi/openapi.ts';
import { PROBLEM_REF } from '../../../src/app/openapi/problem-schema.ts';
import { operationIdOf, toPathTemplates } from '../../../src/app/openapi/route-path.ts';
import { paginated } from '../../../src/app/typed/paginated.ts';
import { resolveConfig } from '../../../src/config/validate.ts';
import { sink } from '../../helpers/sink.ts';

const handler = () => undefined;
const book = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer' }, title: { type: 'string' } } };
const newBook = { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 } } };
const idParams = { type: 'object', properties: { id: { type: 'integer', minimum: 1, description: 'The book id' } } };

const routes: Route[] = [
  paginated(
    {
      method: 'GET',
      path: '/books',
      handler,
      summary: 'List books',
      tags: ['books'],
      schema: { querystring: { type: 'object', properties: { q: { type: 'string' } } } },
    },
    book,
  ),
  { method: 'HEAD', path: '/books', handler },
  {
    method: 'POST',
    path: '/books',
    handler,
    tags: ['books'],
    operationId: 'createBook',
    schema: { body: newBook, response: { 201: book } },
  },
  { method: 'GET', path: '/books/:id', handler, tags: ['books'], schema: { params: idParams, response: { 200: book } } },
  {
    method: 'DELETE',
    path: '/books/:id',
    handler,
    deprecated: true,
    description: 'Use archive instead',
    schema: { response: { 204: {} } },
  },
  {
    method: 'PUT',
    path: '/books/:id/covers/:size',
    handler,
    schema: {
      params: idParams,
      headers: {
        type: 'object',
        required: ['x-tenant'],
        properties: { 'x-tenant': { type: 'string' }, 'content-type': { type: 'string' } },
      },
      cookies: {
        type: 'object',
        required: ['session'],
        properties: { session: { type: 'string', description: 'The signed session id' }, theme: { enum: ['light', 'dark'] } },
      },
      body: { type: 'object' },
    },
  },
  { method: 'GET', path: '/files/*', handler },
  { method: 'GET', path: '/near/:lat-:lng', handler },
  { method: 'GET', path: '/items/:code(^\\d{3}$)', handler },
  { method: 'GET', path: '/authors/:id?', handler },
  { method: 'GET', path: '/internal', handler, hide: true },
  { method: 'HEAD', path: '/only-head', handler },
  { method: 'GET', path: '/', handler },
];

const config = resolveConfig({
  serviceName: 'library',
  docs: {
    title: 'Library API',
    version: '2.1.0',
    description: 'Books and authors',
    contact: { name: 'Team', url: 'https://example.com', email: 'team@example.com' },
    license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
    servers: ['https://api.example.com - Production', 'http://localhost:3000', '/v1 - Relative base'],
    tags: [{ name: 'books', description: 'Book operations' }],
  },
});

/**
 * swagger-parser checks an OpenAPI 3.1 document against the schema and resolves
 * its $refs, but not the rules the schema cannot express; those are checked here.
 */
async function validate(doc: OpenApiDocument): Promise<void> {
  await SwaggerParser.validate(structuredClone(doc) as never); // its OpenAPI.Document type is not exported
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(!ids.has(op.operationId), `${where}: duplicate operationId ${op.operationId}`);
      ids.add(op.operationId);
      const params = op.parameters ?? [];
      const keys = params.map((p) => `${p.in}:${p.name}`);
      assert.equal(new Set(keys).size, keys.length, `${where}: duplicate parameters`);
      const inPath = params.filter((p) => p.in === 'path');
      assert.deepEqual(inPath.map((p) => p.name).sort(), [...templated].sort(), `${where}: path parameters must match the template`);
      assert.ok(
        inPath.every((p) => p.required),
        `${where}: path parameters must be required`,
      );
    }
  }
}

describe('buildOpenApi', () => {
  const doc = buildOpenApi(config, routes as readonly DocumentedRoute[]);

  test('produces a valid OpenAPI 3.1.0 document', async () => {
    await assert.rejects(validate({ ...doc, paths: { '/a/{id}': { get: { operationId: 'a', responses: {} } } } }), /path parameters/);
    assert.equal(doc.openapi, '3.1.0');
    await validate(doc);
  });

  test('info, servers and tags come from config.docs', () => {
    assert.deepEqual(doc.info, {
      title: 'Library API',
      version: '2.1.0',
      description: 'Books and authors',
      contact: { name: 'Team', url: 'https://example.com', email: 'team@example.com' },
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
    });
    assert.deepEqual(doc.servers, [
      { url: 'https://api.example.com', description: 'Production' },
      { url: 'http://localhost:3000' },
      { url: '/v1', description: 'Relative base' },
    ]);
    assert.deepEqual(doc.tags, [{ name: 'books', description: 'Book operations' }]);
  });

  test('the title falls back to the service name; empty servers and tags are left out', async () => {
    const minimal = buildOpenApi(resolveConfig({ serviceName: 'orders' }), []);
    assert.deepEqual(minimal.info, { title: 'orders', version: '1.0.0' });
    assert.equal(minimal.servers, undefined);
    assert.equal(minimal.tags, undefined);
    assert.deepEqual(minimal.paths, {});
    await validate(minimal);
  });

  test('paths use OpenAPI templates; hidden routes and HEAD twins of GET routes are left out', () => {
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/',
      '/authors',
      '/authors/{id}',
      '/books',
      '/books/{id}',
      '/books/{id}/covers/{size}',
      '/files/{wildcard}',
      '/items/{code}',
      '/near/{lat}-{lng}',
      '/only-head',
    ]);
    assert.deepEqual(Object.keys(doc.paths['/books'] ?? {}).sort(), ['get', 'post']);
    assert.ok(doc.paths['/only-head']?.head);
  });

  test('operations carry summary, description, tags, deprecated and stable operation ids', () => {
    const list = doc.paths['/books']?.get;
    assert.equal(list?.summary, 'List books');
    assert.deepEqual(list?.tags, ['books']);
    assert.equal(list?.operationId, 'getBooks');
    assert.equal(doc.paths['/books']?.post?.operationId, 'createBook');
    assert.equal(doc.paths['/books/{id}']?.get?.operationId, 'getBooksById');
    assert.equal(doc.paths['/books/{id}/covers/{size}']?.put?.operationId, 'putBooksByIdCoversBySize');
    assert.equal(doc.paths['/']?.get?.operationId, 'getRoot');
    const del = doc.paths['/books/{id}']?.delete;
    assert.equal(del?.deprecated, true);
    assert.equal(del?.description, 'Use archive instead');
    assert.equal(doc.paths['/books/{id}']?.get?.deprecated, undefined);
  });

  test('path parameters are all declared and required, typed by schema.params or as strings', () => {
    assert.deepEqual(doc.paths['/books/{id}']?.get?.parameters, [
      { name: 'id', in: 'path', required: true, schema: idParams.properties.id, description: 'The book id' },
    ]);
    assert.deepEqual(doc.paths['/books/{id}']?.delete?.parameters, [
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    assert.deepEqual(
      doc.paths['/near/{lat}-{lng}']?.get?.parameters?.map((p) => p.name),
      ['lat', 'lng'],
    );
    assert.deepEqual(doc.paths['/files/{wildcard}']?.get?.parameters, [
      { name: 'wildcard', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    assert.deepEqual(doc.paths['/items/{code}']?.get?.parameters?.[0]?.schema, { type: 'string', pattern: '^(?:\\d{3})$' });
    assert.equal(doc.paths['/authors']?.get?.parameters, undefined);
    assert.equal(doc.paths['/authors/{id}']?.get?.parameters?.length, 1);
  });

  test('query, header and cookie parameters come from the schemas; Content-Type is not a header parameter', () => {
    const cover = doc.paths['/books/{id}/covers/{size}']?.put;
    assert.deepEqual(
      cover?.parameters?.map((p) => [p.name, p.in, p.required]),
      [
        ['id', 'path', true],
        ['size', 'path', true],
        ['x-tenant', 'header', true],
        ['session', 'cookie', true],
        ['theme', 'cookie', false],
      ],
    );
    const session = cover?.parameters?.find((p) => p.name === 'session');
    assert.deepEqual(session, {
      name: 'session',
      in: 'cookie',
      required: true,
      schema: { type: 'string', description: 'The signed session id' },
      description: 'The signed session id',
    });
    // a route that checks its cookies can answer 400
    assert.ok(cover?.responses['400'] !== undefined);
  });

  test('paginated routes document page and limit and the page envelope', () => {
    const list = doc.paths['/books']?.get;
    assert.deepEqual(list?.parameters, [
      { name: 'q', in: 'query', required: false, schema: { type: 'string' } },
      {
        name: 'page',
        in: 'query',
        required: false,
        description: 'Page number, 1-based.',
        schema: { type: 'integer', minimum: 1, default: 1 },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: "Items per page, at most 100: a larger value is reduced to 100 (the page's `limit` says which was used).",
        // no `maximum`: `?limit=1000` is served (with 100 items), so a validating client must not refuse it
        schema: { type: 'integer', minimum: 1, default: 20 },
      },
    ]);
    const envelope = list?.responses['200']?.content?.['application/json']?.schema as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(envelope.properties), ['data', 'total', 'page', 'limit', 'total_pages']);
    assert.deepEqual(envelope.properties['data'], { type: 'array', items: book });
  });

  test('request bodies and declared responses are application/json', () => {
    const create = doc.paths['/books']?.post;
    assert.deepEqual(create?.requestBody, { required: true, content: { 'application/json': { schema: newBook } } });
    assert.deepEqual(create?.responses['201'], { description: 'Created', content: { 'application/json': { schema: book } } });
    assert.equal(create?.responses['200'], undefined, 'no default 200 next to a declared 201');
    assert.deepEqual(doc.paths['/books/{id}']?.delete?.responses['204'], { description: 'No Content' });
    assert.deepEqual(doc.paths['/']?.get?.responses['200'], { description: 'OK' });
  });

  test('error responses are problem+json referencing the Problem schema', () => {
    const problem = { 'application/problem+json': { schema: { $ref: PROBLEM_REF } } };
    const codes = (path: string, method: 'get' | 'post' | 'put' | 'delete') => Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    assert.deepEqual(codes('/', 'get'), ['200', '404', '503', 'default']);
    assert.deepEqual(codes('/books', 'get'), ['200', '400', '404', '503', 'default']);
    // 403: a browser's POST from another origin (`csrf`, on by default)
    assert.deepEqual(codes('/books', 'post'), ['201', '400', '403', '404', '413', '415', '503', 'default']);
    for (const code of ['400', '403', '404', '413', '415', '503', 'default']) {
      assert.deepEqual(doc.paths['/books']?.post?.responses[code]?.content, problem, code);
    }
    const schema = doc.components.schemas['Problem'] as { required: string[]; properties: Record<string, Record<string, unknown>> };
    assert.deepEqual(schema.required, ['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId']);
    assert.equal(schema.properties['type']?.['format'], 'uri-reference');
    assert.equal(schema.properties['status']?.['type'], 'integer');
  });

  test('declared error responses are kept, and Fastify-style status keys are normalised', async () => {
    const custom = buildOpenApi(config, [
      {
        method: 'GET',
        path: '/x/:id',
        handler,
        schema: { response: { '2xx': book, 404: { description: 'No such x', type: 'object' }, bogus: {} } },
      },
    ]);
    const responses = custom.paths['/x/{id}']?.get?.responses ?? {};
    assert.deepEqual(Object.keys(responses), ['404', '503', '2XX', 'default']);
    assert.deepEqual(responses['404'], {
      description: 'No such x',
      content: { 'application/json': { schema: { description: 'No such x', type: 'object' } } },
    });
    await validate(custom);
  });

  test('operation ids stay unique', async () => {
    const clash = buildOpenApi(config, [
      { method: 'GET', path: '/a-b', handler },
      { method: 'GET', path: '/a_b', handler },
      { method: 'GET', path: '/c', handler, operationId: 'same' },
      { method: 'GET', path: '/d', handler, operationId: 'same' },
    ]);
    assert.deepEqual(
      Object.values(clash.paths).map((p) => p.get?.operationId),
      ['getAB', 'getAB2', 'same', 'same2'],
    );
    await validate(clash);
  });

  test('the document shares no object with the routes', () => {
    const again = buildOpenApi(config, routes as readonly DocumentedRoute[]);
    const schema = again.paths['/books/{id}']?.get?.responses['200']?.content?.['application/json']?.schema;
    assert.deepEqual(schema, book);
    assert.notEqual(schema, book);
    assert.notEqual(again.components.schemas['Problem'], doc.components.schemas['Problem']);
  });
});

describe('parseServer', () => {
  test('splits "<url> - <description>" at the first separator', () => {
    assert.deepEqual(parseServer('https://a.example - EU - primary'), { url: 'https://a.example', description: 'EU - primary' });
    assert.deepEqual(parseServer('https://a.example'), { url: 'https://a.example' });
  });
});

describe('toPathTemplates and operationIdOf', () => {
  test('translate find-my-way syntax', () => {
    const templates = (path: string) => toPathTemplates(path).map((t) => t.template);
    assert.deepEqual(templates('/books/:id'), ['/books/{id}']);
    assert.deepEqual(templates('/time/12::30'), ['/time/12:30']);
    assert.deepEqual(templates('/static/*'), ['/static/{wildcard}']);
    assert.deepEqual(templates('*'), ['/{wildcard}']);
    assert.deepEqual(templates('/files/:name.:ext'), ['/files/{name}.{ext}']);
    assert.deepEqual(templates('/:id?'), ['/', '/{id}']);
    assert.deepEqual(toPathTemplates('/static/*')[0]?.params, [{ name: 'wildcard', key: '*' }]);
    assert.deepEqual(toPathTemplates('/v/:n(^\\d+$)/x')[0], {
      template: '/v/{n}/x',
      params: [{ name: 'n', key: 'n', pattern: '^(?:\\d+)$' }],
    });
  });

  test('operation ids are camelCase words of the method and path', () => {
    assert.equal(operationIdOf('get', '/books/{id}'), 'getBooksById');
    assert.equal(operationIdOf('DELETE', '/user-groups/{group_id}/members'), 'deleteUserGroupsByGroupIdMembers');
    assert.equal(operationIdOf('get', '/'), 'getRoot');
  });
});

test('GET /health is documented with the media type it is served with', async () => {
  const app = new App({ logging: { level: 'silent' } }, { logStream: sink(), handleSignals: false });
  const health = app.openapi().paths['/health']?.get;
  for (const status of ['200', '503']) assert.deepEqual(Object.keys(health?.responses[status]?.content ?? {}), ['application/health+json']);
  const served = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(served.headers['content-type'], 'application/health+json');
  await SwaggerParser.validate(structuredClone(app.openapi()) as never);
});

describe('routes a jwtAuth hook guards', () => {
  const auth = jwtAuth({ secret: 'a-shared-secret-of-32-characters!!' });
  const route = (path: string, extra: Partial<Route> = {}): Route => ({ method: 'GET', path, handler: () => 'ok', ...extra });

  test('require the bearer scheme and document their 401; a hook added to a group later counts; others are untouched', async () => {
    const app = new App({ logging: { level: 'silent' } });
    app.registerController({ routes: () => [route('/public')] });
    const api = app.group('/api');
    api.registerController({ routes: () => [route('/books'), route('/mine', { security: [] })] });
    app.registerController({ routes: () => [route('/own', { onRequest: [auth] })] });
    const before = app.openapi();
    assert.equal(before.paths['/api/books']?.get?.security, undefined, 'no hook yet');
    api.onRequest(auth);
    const doc = app.openapi();
    assert.deepEqual(doc.paths['/api/books']?.get?.security, [{ bearerAuth: [] }]);
    assert.ok(doc.paths['/api/books']?.get?.responses['401'] !== undefined);
    assert.deepEqual(doc.paths['/own']?.get?.security, [{ bearerAuth: [] }], "a route's own hook");
    assert.deepEqual(doc.paths['/api/mine']?.get?.security, [], "a route's own security wins");
    assert.equal(doc.paths['/public']?.get?.security, undefined);
    assert.equal(doc.paths['/public']?.get?.responses['401'], undefined);
    assert.deepEqual(doc.components.securitySchemes?.['bearerAuth'], { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    await validate(doc);
  });

  test("use the config's own bearer scheme when it declares one", async () => {
    const app = new App({
      logging: { level: 'silent' },
      docs: { securitySchemes: { idp: { type: 'http', scheme: 'Bearer', description: 'tokens of the identity provider' } } },
    });
    app.onRequest(auth);
    app.registerController({ routes: () => [route('/books')] });
    const doc = app.openapi();
    assert.deepEqual(doc.paths['/books']?.get?.security, [{ idp: [] }]);
    assert.deepEqual(Object.keys(doc.components.securitySchemes ?? {}), ['idp']);
    await validate(doc);
  });
});

describe('the problems flotilla answers with itself, and those a route declares', () => {
  const route = (path: string, extra: Partial<Route> = {}): Route => ({ method: 'GET', path, handler: () => 'ok', ...extra });
  /** A route as `buildOpenApi` reads it, handed in directly. */
  const documented = (path: string, extra: Partial<Route> = {}) => route(path, extra) as DocumentedRoute;
  const problem = { 'application/problem+json': { schema: { $ref: PROBLEM_REF } } };
  const schemes = {
    apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://auth.example.com/token', scopes: { 'books:write': 'w' } } } },
  } as const;

  test('401 where security requires credentials, 403 where it requires scopes; the default security counts', async () => {
    const app = new App({ logging: { level: 'silent' }, docs: { securitySchemes: schemes, security: [{ apiKey: [] }] } });
    app.registerController({
      routes: () => [
        route('/keyed'),
        route('/public', { security: [] }),
        route('/scoped', { security: [{ oauth: ['books:write'] }] }),
        route('/optional', { security: [{ apiKey: [] }, {}] }),
      ],
    });
    const doc = app.openapi();
    const responses = (path: string) => doc.paths[path]?.get?.responses ?? {};
    assert.match(responses('/keyed')['401']?.description ?? '', /`UNAUTHORIZED`/);
    assert.deepEqual(responses('/keyed')['401']?.content, problem);
    assert.equal(responses('/keyed')['403'], undefined, 'no scope: nothing to forbid');
    assert.equal(responses('/public')['401'], undefined);
    assert.match(responses('/scoped')['403']?.description ?? '', /`FORBIDDEN`/);
    assert.ok(responses('/scoped')['401'] !== undefined);
    assert.ok(responses('/optional')['401'] !== undefined, 'credentials sent may still be wrong');
    assert.equal(doc.paths['/health']?.get?.responses['401'], undefined, '/health declares security: []');
    await validate(doc);
  });

  test('403 CROSS_ORIGIN_REQUEST on unsafe methods while csrf is on', () => {
    const routes = [documented('/a', { method: 'POST' }), documented('/a')];
    const on = buildOpenApi(config, routes).paths['/a'];
    assert.match(on?.post?.responses['403']?.description ?? '', /`CROSS_ORIGIN_REQUEST`/);
    assert.equal(on?.get?.responses['403'], undefined, 'a GET is never refused');
    const off = buildOpenApi(resolveConfig({ csrf: { enabled: false } }), routes).paths['/a'];
    assert.equal(off?.post?.responses['403'], undefined);
  });

  test("429 with Retry-After and the RateLimit fields where a rate limit applies: the route's, its group's or the App's", async () => {
    const app = new App({ logging: { level: 'silent' }, rateLimit: { max: 100, windowMs: 60_000 } });
    const api = app.group('/api', { rateLimit: { max: 5, windowMs: 1_000 } });
    api.registerController({ routes: () => [route('/grouped'), route('/free', { rateLimit: false })] });
    app.registerController({ routes: () => [route('/app')] });
    const doc = app.openapi();
    const tooMany = doc.paths['/api/grouped']?.get?.responses['429'];
    assert.equal(tooMany?.description, 'Too Many Requests: `RATE_LIMITED` (more than 5 requests in 1 second)');
    assert.deepEqual(Object.keys(tooMany?.headers ?? {}), ['Retry-After', 'RateLimit-Policy', 'RateLimit']);
    assert.ok(Object.values(tooMany?.headers ?? {}).every((h) => h.required === true));
    assert.deepEqual(tooMany?.content, problem);
    assert.match(doc.paths['/app']?.get?.responses['429']?.description ?? '', /100 requests in 60 seconds/);
    assert.equal(doc.paths['/api/free']?.get?.responses['429'], undefined);
    assert.equal(doc.paths['/health']?.get?.responses['429'], undefined, 'probes are never limited');
    await validate(doc);
  });

  test('503 on every route: OVERLOADED, and HANDLER_TIMEOUT where a time limit applies', () => {
    const doc = buildOpenApi(resolveConfig({ timeouts: { handlerMs: 2_000 } }), [documented('/a'), documented('/b', { timeoutMs: 0 })]);
    const a = doc.paths['/a']?.get?.responses['503'];
    assert.equal(
      a?.description,
      'Service Unavailable: `OVERLOADED` (the service is past its capacity), `HANDLER_TIMEOUT` (the request ran longer than 2000 ms)',
    );
    assert.deepEqual(Object.keys(a?.headers ?? {}), ['Retry-After']);
    assert.doesNotMatch(doc.paths['/b']?.get?.responses['503']?.description ?? '', /HANDLER_TIMEOUT/);
  });

  test('413 and 415 where the route takes a body, naming its limit and its media types', () => {
    const doc = buildOpenApi(config, [
      documented('/json', { method: 'POST', bodyLimit: 2_048, schema: { body: { type: 'object' } } }),
      documented('/text', { method: 'PUT', body: 'text' }),
      documented('/none', { method: 'POST' }),
    ]);
    const json = doc.paths['/json']?.post?.responses ?? {};
    assert.match(json['413']?.description ?? '', /exceeds 2048 bytes/);
    assert.match(json['400']?.description ?? '', /`MALFORMED_JSON`/);
    assert.match(doc.paths['/text']?.put?.responses['415']?.description ?? '', /text\/plain/);
    assert.doesNotMatch(doc.paths['/text']?.put?.responses['400']?.description ?? '', /MALFORMED_JSON/);
    assert.equal(doc.paths['/none']?.post?.responses['413'], undefined, 'no body documented: none to refuse');
  });

  test('`problems`: registered codes, codes of its own and bare statuses, merged with what flotilla answers', async () => {
    const app = new App({ logging: { level: 'silent' }, docs: { securitySchemes: schemes } });
    app.registerController({
      routes: () => [
        route('/books', {
          method: 'POST',
          security: [{ apiKey: [] }],
          problems: ['CONFLICT', { status: 409, code: 'ISBN_TAKEN', description: 'a book with this ISBN exists' }, 422, 'UNAUTHORIZED'],
          schema: { body: { type: 'object' } },
        }),
        route('/me', {
          problems: ['UNAUTHORIZED'],
          schema: { response: { 401: { description: 'Nobody is logged in', content: problem } } },
        }),
      ],
    });
    const doc = app.openapi();
    const books = doc.paths['/books']?.post?.responses ?? {};
    assert.equal(books['409']?.description, 'Conflict: `CONFLICT`, `ISBN_TAKEN` (a book with this ISBN exists)');
    assert.deepEqual(books['409']?.content, problem);
    assert.equal(books['422']?.description, 'Unprocessable Entity');
    assert.equal(
      books['401']?.description,
      'Unauthorized: `UNAUTHORIZED` (the credentials its security requires are missing or invalid)',
      'declared and automatic: one cause per code',
    );
    assert.equal(doc.paths['/me']?.get?.responses['401']?.description, 'Nobody is logged in', 'a declared schema.response wins');
    await validate(doc);
  });

  test('a wrong `problems` option is refused at registration, naming the route', () => {
    const app = new App({ logging: { level: 'silent' } });
    const register = (problems: unknown) => () =>
      app.registerController({ routes: () => [route(`/p${Math.random()}`, { problems } as Partial<Route>)] });
    for (const [problems, reason] of [
      ['CONFLICT', /problems must be a list/],
      [['CONFLICTS'], /problems\[0\]: 'CONFLICTS' is not a registered error code/],
      [[200], /problems\[0\]: a status must be an integer in 400..599, got 200/],
      [[{ status: 409, code: '' }], /problems\[0\]\.code must be a non-empty string/],
      [[{ status: 409, title: 'x' }], /unknown key 'title'/],
      [[null], /expected an error code, a status or/],
    ] as const) {
      assert.throws(register(problems), (e: Error & { code?: string }) => e.code === 'FLO_ERR_BAD_ROUTE_OPTION' && reason.test(e.message));
    }
  });
});
