import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newPage } from '../../../src/app/pagination/page.ts';
import { controller, testApp } from '../../helpers/app.ts';

describe('Ctx in a request', () => {
  function listApp() {
    const { app } = testApp();
    const items = Array.from({ length: 45 }, (_, i) => ({ id: i + 1 }));
    app.registerController(
      controller({
        method: 'GET',
        path: '/items',
        handler: (ctx) => {
          const q = ctx.parsePagination();
          const offset = (q.page - 1) * q.limit;
          ctx.ok(newPage(items.slice(offset, offset + q.limit), items.length, q.page, q.limit));
        },
      }),
    );
    return app;
  }

  test('parsePagination reads page and limit from the query, with the defaults', async () => {
    const app = listApp();
    const first = (await app.inject('/items')).json();
    assert.deepEqual([first.page, first.limit, first.total, first.total_pages, first.data.length], [1, 20, 45, 3, 20]);
    const third = (await app.inject('/items?page=3&limit=20')).json();
    assert.deepEqual(third.data, [{ id: 41 }, { id: 42 }, { id: 43 }, { id: 44 }, { id: 45 }]);
    const capped = (await app.inject('/items?limit=500')).json();
    assert.equal(capped.limit, 100);
    assert.equal(capped.data.length, 45);
  });

  test('a bad page or limit is a 400 problem naming the parameter', async () => {
    const app = listApp();
    for (const [query, parameter] of [
      ['page=abc', 'page'],
      ['page=0', 'page'],
      ['limit=1.5', 'limit'],
      ['limit=-3', 'limit'],
    ] as const) {
      const res = await app.inject(`/items?${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.json().code, 'INVALID_PAGINATION');
      assert.match(res.json().detail, new RegExp(`'${parameter}'`));
    }
  });

  test('headers, params, query and method are the request’s', async () => {
    const { app } = testApp();
    app.registerController(
      controller({
        method: 'PATCH',
        path: '/things/:id',
        handler: (ctx) => ({
          method: ctx.method,
          path: ctx.path,
          id: ctx.params['id'],
          q: ctx.query['q'],
          agent: ctx.headers['user-agent'],
        }),
      }),
    );
    const res = await app.inject({ method: 'PATCH', url: '/things/7?q=x', headers: { 'user-agent': 'test-agent' } });
    assert.deepEqual(res.json(), { method: 'PATCH', path: '/things/7', id: '7', q: 'x', agent: 'test-agent' });
  });
});
