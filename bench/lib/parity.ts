import { isDeepStrictEqual } from 'node:util';
import { itemById, ORIGIN, pageOf } from '../services/data.ts';
import { get, type Reply } from './http.ts';

/**
 * Checks that a contender answers like the others before it is measured: the
 * same bodies, problem responses for errors, and (except the floor) the
 * CORS, Vary and X-Request-Id headers. Returns the differences found.
 */
export async function checkParity(port: number, floor: boolean): Promise<string[]> {
  const issues: string[] = [];
  const headers = { Origin: ORIGIN };
  const expect = (what: string, ok: boolean) => {
    if (!ok) issues.push(what);
  };
  const json = (r: Reply): unknown => {
    try {
      return JSON.parse(r.body);
    } catch {
      return undefined;
    }
  };
  const list = await get(port, '/items?page=3&limit=20', headers);
  expect('list: 200 with the Page<T> envelope', list.status === 200 && isDeepStrictEqual(json(list), pageOf(3, 20)));
  const one = await get(port, '/items/42', headers);
  expect('get: 200 with item 42', one.status === 200 && isDeepStrictEqual(json(one), itemById(42)));
  for (const [path, status] of [
    ['/items/999999', 404],
    ['/items?page=abc', 400],
    ['/no-such-route', 404],
  ] as const) {
    const r = await get(port, path, headers);
    expect(
      `${path}: ${status} problem+json`,
      r.status === status && String(r.headers['content-type']).startsWith('application/problem+json'),
    );
  }
  if (!floor) {
    for (const r of [list, one]) {
      expect('Access-Control-Allow-Origin', r.headers['access-control-allow-origin'] === ORIGIN);
      expect('Access-Control-Expose-Headers: X-Request-Id', /x-request-id/i.test(String(r.headers['access-control-expose-headers'])));
      expect('Vary: Origin', /origin/i.test(String(r.headers['vary'])));
      expect('X-Request-Id', typeof r.headers['x-request-id'] === 'string');
    }
  }
  return [...new Set(issues)];
}
