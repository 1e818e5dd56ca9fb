import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { ResponseSerializer } from '../../../src/app/core/ctx.ts';
import type { JsonSchema, Route, RouteSchema } from '../../../src/app/core/route.ts';
import { compileSerializer, ResponseSchemaError } from '../../../src/app/core/serializer.ts';
import { newPage, pageSchema } from '../../../src/app/pagination/page.ts';
import { paginated } from '../../../src/app/typed/paginated.ts';
import { FlotillaError } from '../../../src/errors/flotilla-error.ts';

const handler = () => undefined;
const USER = {
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    admin: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
  },
};
const ITEM = {
  type: 'object',
  required: ['id', 'sku'],
  properties: { id: { type: 'integer' }, sku: { type: 'string' }, price: { type: 'number' } },
};

function serializerOf(response: NonNullable<RouteSchema['response']>, extra: Partial<Route> = {}): ResponseSerializer {
  const serialize = compileSerializer({ method: 'GET', path: '/users/:id', handler, schema: { response }, ...extra });
  assert.ok(serialize, 'a serializer is compiled');
  return serialize;
}

function misfit(serialize: ResponseSerializer, value: unknown, status = 200): ResponseSchemaError {
  let caught: unknown;
  try {
    serialize(status, value);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ResponseSchemaError, `expected a ResponseSchemaError, got ${String(caught)}`);
  return caught;
}

/** Freezes a schema and everything in it: compiling must not change a route's schemas. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe('which routes get a serializer', () => {
  test('a route without response schemas keeps JSON.stringify (no serializer)', () => {
    assert.equal(compileSerializer({ method: 'GET', path: '/', handler }), undefined);
    assert.equal(compileSerializer({ method: 'GET', path: '/', handler, schema: { params: { type: 'object' } } }), undefined);
  });

  test('schemas that constrain nothing, body-less statuses and keys OpenAPI ignores give none either', () => {
    const none = compileSerializer({
      method: 'GET',
      path: '/',
      handler,
      schema: { response: { 200: { description: 'anything' }, 201: {}, 204: USER, 304: USER, bogus: USER, 600: USER } },
    });
    assert.equal(none, undefined);
  });

  test('a paginated route gets the Page<T> envelope of its items', () => {
    const serialize = compileSerializer(paginated({ method: 'GET', path: '/items', handler }, ITEM))!;
    const page = newPage([{ id: 1, sku: 'A-1', price: 2.5, secret: 'x' }], 41, 3, 20);
    assert.equal(serialize(200, page), '{"data":[{"id":1,"sku":"A-1","price":2.5}],"total":41,"page":3,"limit":20,"total_pages":3}');
  });

  test('a route marked paginated without a 200 schema gets the envelope too, as the OpenAPI document says', () => {
    const serialize = compileSerializer({ method: 'GET', path: '/items', handler, paginated: { item: ITEM } })!;
    assert.equal(
      serialize(200, newPage([{ id: 1, sku: 'A-1', x: 1 }], 1, 1, 20)),
      '{"data":[{"id":1,"sku":"A-1"}],"total":1,"page":1,"limit":20,"total_pages":1}',
    );
  });

  test("a paginated route's own 200 schema wins over the envelope", () => {
    const own = { type: 'object', properties: { items: { type: 'array' } } };
    const serialize = compileSerializer(paginated({ method: 'GET', path: '/items', handler, schema: { response: { 200: own } } }, ITEM))!;
    assert.equal(serialize(200, { items: [1], data: [] }), '{"items":[1]}');
  });

  test("Fastify's content form: the application/json schema shapes, other media types do not", () => {
    const serialize = serializerOf({
      200: { description: 'A user', content: { 'application/json': { schema: USER } } },
      203: { description: 'Text', content: { 'text/plain': { schema: { type: 'string' } } } },
    });
    assert.equal(serialize(200, { id: 1, name: 'a', password: 'x' }), '{"id":1,"name":"a"}');
    assert.equal(serialize(203, { id: 1, password: 'x' }), undefined);
  });
});

describe('what is sent', () => {
  test('an undeclared property is never sent, with or without additionalProperties: false', () => {
    const open = { ...USER, additionalProperties: undefined };
    for (const schema of [USER, open]) {
      const serialize = serializerOf({ 200: schema });
      const body = serialize(200, { id: 7, password: 'leaked', name: 'Ann', nested: { password: 'leaked' } })!;
      assert.deepEqual(JSON.parse(body), { id: 7, name: 'Ann' });
      assert.doesNotMatch(body, /leaked/);
    }
  });

  test('undeclared properties are left out at every depth: array items, nested objects, $ref targets', () => {
    const serialize = serializerOf({
      200: {
        type: 'object',
        $defs: { user: USER },
        properties: { owner: { $ref: '#/$defs/user' }, members: { type: 'array', items: { $ref: '#/$defs/user' } } },
      },
    });
    const leak = { id: 1, name: 'a', password: 'leaked' };
    assert.equal(
      serialize(200, { owner: leak, members: [leak, leak], token: 'leaked' }),
      '{"owner":{"id":1,"name":"a"},"members":[{"id":1,"name":"a"},{"id":1,"name":"a"}]}',
    );
  });

  test('a value that fits exactly is written as JSON.stringify writes it', () => {
    const serialize = serializerOf({ 200: USER });
    const value = { id: 7, name: 'Ann "the" \\ \u2028 😀 \ud800', admin: false, tags: ['a', ''] };
    assert.equal(serialize(200, value), JSON.stringify(value));
  });

  test('a Date is a string: ISO 8601, or as format date says', () => {
    const serialize = serializerOf({
      200: { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, day: { type: 'string', format: 'date' } } },
    });
    const at = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6));
    assert.deepEqual(JSON.parse(serialize(200, { at })!), { at: '2025-01-02T03:04:05.006Z' });
    assert.match(JSON.parse(serialize(200, { day: at })!).day, /^\d{4}-\d{2}-\d{2}$/);
  });

  test('declared getters of class instances are read, as the schema declares them', () => {
    class User {
      id = 3;
      #password = 'leaked';
      get name(): string {
        return `user ${this.id}${this.#password.length > 0 ? '' : '?'}`;
      }
    }
    assert.equal(serializerOf({ 200: USER })(200, new User()), '{"id":3,"name":"user 3"}');
  });

  test("a missing property with a default is sent with it (fast-json-stringify's rule)", () => {
    const serialize = serializerOf({
      200: { type: 'object', properties: { id: { type: 'integer' }, role: { type: 'string', default: 'reader' } } },
    });
    assert.equal(serialize(200, { id: 1 }), '{"id":1,"role":"reader"}');
    assert.equal(serialize(200, { id: 1, role: 'admin' }), '{"id":1,"role":"admin"}');
  });

  test('the schema is picked by the exact status, then its class, then default; other statuses keep JSON.stringify', () => {
    const serialize = serializerOf({
      200: { type: 'object', properties: { exact: { type: 'integer' } } },
      '2xx': { type: 'object', properties: { klass: { type: 'integer' } } },
      default: { type: 'object', properties: { fallback: { type: 'integer' } } },
    });
    const value = { exact: 1, klass: 2, fallback: 3 };
    assert.equal(serialize(200, value), '{"exact":1}');
    assert.equal(serialize(201, value), '{"klass":2}');
    assert.equal(serialize(404, value), '{"fallback":3}');
    assert.equal(serialize(204, value), undefined);
    const only200 = serializerOf({ 200: USER });
    assert.equal(only200(201, { anything: 1 }), undefined);
  });

  test('the same schema object (with an $id) serves several routes and statuses', () => {
    const shared = { $id: 'User', ...USER };
    const a = serializerOf({ 200: shared, 201: shared });
    const b = serializerOf({ 200: shared });
    for (const [serialize, status] of [
      [a, 200],
      [a, 201],
      [b, 200],
    ] as const)
      assert.equal(serialize(status, { id: 1, name: 'x', pw: 1 }), '{"id":1,"name":"x"}');
  });

  test("compiling never changes the route's schemas", () => {
    const schema = deepFreeze(
      structuredClone({ ...USER, properties: { ...USER.properties, when: { type: 'string', format: 'date-time' } } }),
    );
    const route = deepFreeze(paginated({ method: 'GET', path: '/users', handler }, schema));
    const before = structuredClone(route.schema);
    const serialize = compileSerializer(route)!;
    serialize(200, newPage([{ id: 1, name: 'a', when: new Date(), extra: 1 }], 1, 1, 20));
    assert.deepEqual(route.schema, before);
  });
});

describe('what does not fit', () => {
  const serialize = serializerOf({ 200: USER });
  const cases: [string, unknown][] = [
    ['a string where an integer is declared', { id: '7', name: 'a' }],
    ['a fraction where an integer is declared', { id: 7.5, name: 'a' }],
    ['a BigInt', { id: 7n, name: 'a' }],
    ['null where an object is declared', null],
    ['an array where an object is declared', [{ id: 1, name: 'a' }]],
    ['a missing required property', { id: 1 }],
    ['a required property set to undefined', { id: 1, name: undefined }],
    ['a number where a string is declared', { id: 1, name: 5 }],
    ['an object where a string is declared', { id: 1, name: { first: 'a' } }],
    ['the string "false" where a boolean is declared', { id: 1, name: 'a', admin: 'false' }],
    ['null where a boolean is declared', { id: 1, name: 'a', admin: null }],
    ['a string where an array is declared', { id: 1, name: 'a', tags: 'a,b' }],
    ['numbers in an array of strings', { id: 1, name: 'a', tags: [1, 2] }],
    ['a function', { id: 1, name: () => 'a' }],
  ];
  for (const [what, value] of cases) {
    test(`${what} is a ResponseSchemaError`, () => {
      misfit(serialize, value);
    });
  }

  test('NaN and Infinity are not numbers; undefined, functions and symbols are not JSON values where any value is declared', () => {
    const loose = serializerOf({ 200: { type: 'object', properties: { n: { type: 'number' }, any: {}, list: { type: 'array' } } } });
    for (const value of [
      { n: Number.NaN },
      { n: Number.POSITIVE_INFINITY },
      { any: () => 1 },
      { any: Symbol('s') },
      { list: [1, undefined] },
    ]) {
      misfit(loose, value);
    }
    assert.equal(loose(200, { any: { deep: [1, 'x'] }, list: [1, null, 'x'] }), '{"any":{"deep":[1,"x"]},"list":[1,null,"x"]}');
  });

  test('bounds, enums, constants and formats are checked too', () => {
    const strict = serializerOf({
      200: {
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: 1, maximum: 10 },
          state: { enum: ['open', 'closed'] },
          kind: { const: 'user' },
          email: { type: 'string', format: 'email' },
        },
      },
    });
    for (const value of [{ n: 0 }, { n: 11 }, { state: 'lost' }, { kind: 'admin' }, { email: 'not an email' }]) misfit(strict, value);
    assert.equal(
      strict(200, { n: 5, state: 'open', kind: 'user', email: 'a@example.com' }),
      '{"n":5,"state":"open","kind":"user","email":"a@example.com"}',
    );
  });

  test('a paginated page whose items or envelope do not fit', () => {
    const page = compileSerializer(paginated({ method: 'GET', path: '/items', handler }, ITEM))!;
    misfit(page, newPage([{ id: 'one', sku: 'a' }], 1, 1, 20));
    misfit(page, newPage([{ id: 1 }], 1, 1, 20));
    misfit(page, newPage([], 1, 1, 500)); // limit above the documented maximum
    misfit(page, { data: [] });
  });

  test('the message names the route, the status, the schema key and where, never the value', () => {
    const error = misfit(serializerOf({ '2xx': USER }), { id: 'secret-value', name: 'a' }, 201);
    assert.equal(error.message, "GET /users/:id: the 201 response does not fit its '2XX' schema: /id must be integer");
    assert.match(misfit(serialize, { id: 1 }).message, /the 200 response does not fit its schema: \/name is missing$/);
    assert.doesNotMatch(misfit(serialize, { id: 1, name: 'a', admin: 'secret-value' }).message, /secret-value/);
  });
});

describe('schemas that cannot be compiled', () => {
  test('are compiled on first use, and every use throws FLO_ERR_BAD_SCHEMA naming the route and status', () => {
    const serialize = serializerOf({ 200: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } });
    for (let i = 0; i < 2; i++) {
      assert.throws(
        () => serialize(200, { a: 1 }),
        (error: unknown) =>
          error instanceof FlotillaError &&
          error.code === 'FLO_ERR_BAD_SCHEMA' &&
          /route GET \/users\/:id: the response 200 schema/.test(error.message),
      );
    }
  });
});

describe('property: the body is the declared projection of the value', () => {
  const item = fc.record(
    { id: fc.integer(), sku: fc.string(), price: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { requiredKeys: ['id', 'sku'] },
  );
  const extras = fc.dictionary(
    fc.string().filter((k) => !['id', 'sku', 'price', '__proto__'].includes(k)),
    fc.jsonValue(),
  );
  const serialize = compileSerializer(paginated({ method: 'GET', path: '/items', handler }, ITEM))!;
  const project = (value: Record<string, unknown>) =>
    Object.fromEntries(['id', 'sku', 'price'].filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));

  test('with or without undeclared properties, JSON.parse(body) equals the item with only its declared properties', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(item, extras), { maxLength: 20 }), fc.integer({ min: 1, max: 100 }), (rows, limit) => {
        const data = rows.map(([it, more]) => ({ ...more, ...it }));
        const body = serialize(200, newPage(data, data.length, 1, limit))!;
        assert.deepEqual(JSON.parse(body), JSON.parse(JSON.stringify(newPage(data.map(project), data.length, 1, limit))));
      }),
      { numRuns: 300 },
    );
  });
});

test('pageSchema is the envelope the serializer writes', () => {
  const schema: JsonSchema = pageSchema(ITEM);
  assert.deepEqual(Object.keys(schema['properties'] as object), ['data', 'total', 'page', 'limit', 'total_pages']);
});
