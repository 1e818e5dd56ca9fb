import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Route } from '../../../src/app/core/route.ts';
import { pageSchema } from '../../../src/app/pagination/page.ts';
import { paginated } from '../../../src/app/typed/paginated.ts';

describe('paginated', () => {
  const item = { type: 'object', properties: { id: { type: 'integer' } } };

  test('paginated copies the route, marks it and defaults the 200 response', () => {
    const route: Route = { method: 'GET', path: '/books', handler: () => undefined, schema: { querystring: { type: 'object' } } };
    const out = paginated(route, item);
    assert.notEqual(out, route);
    assert.equal(route.paginated, undefined);
    assert.deepEqual(out.paginated, { item });
    assert.deepEqual(out.schema?.response?.[200], pageSchema(item));
    assert.deepEqual(out.schema?.querystring, { type: 'object' }, 'page/limit are not added to the validated querystring');
  });

  test('paginated keeps a declared 200 response', () => {
    const custom = { type: 'object' };
    const out = paginated({ method: 'GET', path: '/x', handler: () => undefined, schema: { response: { 200: custom } } }, item);
    assert.equal(out.schema?.response?.[200], custom);
  });
});
