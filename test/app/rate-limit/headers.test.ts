import { type TestContext, test } from 'node:test';
import { rateLimitPolicy } from '../../../src/app/core/rate-limit-policy.ts';
import { policyHeader, rateLimitHeader, resetSeconds, sfString } from '../../../src/app/rate-limit/headers.ts';

const policy = (max: number, windowMs: number, name = 'default') => {
  const p = rateLimitPolicy({ max, windowMs }, name, 'test');
  if (p === undefined || p === false) throw new Error('no policy');
  return p;
};

test('RateLimit-Policy: the name as a structured-field string, q the quota, w the window in whole seconds (rounded up)', (t: TestContext) => {
  t.assert.equal(policyHeader(policy(50, 60_000)), '"default";q=50;w=60');
  t.assert.equal(policyHeader(policy(3, 1_500, 'GET /books/:id')), '"GET /books/:id";q=3;w=2');
  t.assert.equal(policyHeader(policy(1, 1)), '"default";q=1;w=1');
});

test('RateLimit: r the remaining quota, t the whole seconds until the window ends, at least 1', (t: TestContext) => {
  t.assert.equal(rateLimitHeader('"default"', 0, 41_200), '"default";r=0;t=42');
  t.assert.equal(rateLimitHeader('"default"', 49, 60_000), '"default";r=49;t=60');
  t.assert.equal(rateLimitHeader('"default"', 3, 0), '"default";r=3;t=1');
  t.assert.equal(resetSeconds(1), 1);
  t.assert.equal(resetSeconds(1_001), 2);
});

test('a name a structured-field string cannot hold as is is escaped, or its characters replaced', (t: TestContext) => {
  t.assert.equal(sfString('a"b\\c'), '"a\\"b\\\\c"');
  t.assert.equal(sfString('/café\n'), '"/caf??"');
});
