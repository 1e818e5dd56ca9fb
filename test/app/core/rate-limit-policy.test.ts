import { type TestContext, test } from 'node:test';
import { clientAddress, rateLimitPolicy } from '../../../src/app/core/rate-limit-policy.ts';
import { FlotillaError } from '../../../src/errors/flotilla-error.ts';

test('a valid option becomes a policy with its defaults: the client address as key, fail open', (t: TestContext) => {
  const policy = rateLimitPolicy({ max: 5, windowMs: 1_000 }, 'GET /x', "route 'GET /x'");
  t.assert.ok(policy);
  t.assert.equal(policy.name, 'GET /x');
  t.assert.equal(policy.key, clientAddress);
  t.assert.equal(policy.onStoreError, 'open');
  const key = () => 'k';
  const closed = rateLimitPolicy({ max: 1, windowMs: 1, key, onStoreError: 'closed' }, 'n', 'o');
  t.assert.ok(closed);
  t.assert.equal(closed.key, key);
  t.assert.equal(closed.onStoreError, 'closed');
});

test('absent stays absent and false stays false (none here, nor inherited)', (t: TestContext) => {
  t.assert.equal(rateLimitPolicy(undefined, 'n', 'o'), undefined);
  t.assert.equal(rateLimitPolicy(false, 'n', 'o'), false);
});

test('a bad option is a FLO_ERR_BAD_RATE_LIMIT naming its owner and the problem', (t: TestContext) => {
  const cases: [unknown, RegExp][] = [
    [{ max: 0, windowMs: 1_000 }, /rateLimit\.max must be a positive integer, got number 0/],
    [{ max: -1, windowMs: 1_000 }, /rateLimit\.max must be a positive integer/],
    [{ max: 1.5, windowMs: 1_000 }, /rateLimit\.max must be a positive integer/],
    [{ max: '5', windowMs: 1_000 }, /rateLimit\.max must be a positive integer, got the string "5"/],
    [{ windowMs: 1_000 }, /rateLimit\.max must be a positive integer, got undefined/],
    [{ max: 5, windowMs: 0 }, /rateLimit\.windowMs must be a positive integer of ms up to \d+, got number 0/],
    [{ max: 5, windowMs: -10 }, /rateLimit\.windowMs must be a positive integer/],
    [{ max: 5, windowMs: Number.POSITIVE_INFINITY }, /rateLimit\.windowMs must be a positive integer/],
    [{ max: 5, windowMs: 1_000, key: 'ip' }, /rateLimit\.key must be a function of ctx, got the string "ip"/],
    [{ max: 5, windowMs: 1_000, onStoreError: 'maybe' }, /rateLimit\.onStoreError must be 'open' or 'closed'/],
    [{ max: 5, windowMs: 1_000, window: 1 }, /unknown rateLimit option 'window'/],
    [{ max: 5, windowMs: 1_000, ipv6Subnet: 0 }, /rateLimit\.ipv6Subnet must be an integer from 1 to 128, got number 0/],
    [{ max: 5, windowMs: 1_000, ipv6Subnet: 129 }, /rateLimit\.ipv6Subnet must be an integer from 1 to 128/],
    [
      true,
      /rateLimit must be an object \{ max, windowMs, key\?, ipv6Subnet\?, onStoreError\?, countIf\?, hook\? \} or false, got boolean true/,
    ],
    [null, /got null/],
    [[5, 1000], /got an array/],
  ];
  for (const [option, message] of cases) {
    t.assert.throws(
      () => rateLimitPolicy(option, 'n', "route 'GET /x'"),
      (error: unknown) =>
        error instanceof FlotillaError &&
        error instanceof TypeError &&
        error.code === 'FLO_ERR_BAD_RATE_LIMIT' &&
        error.message.startsWith("route 'GET /x': ") &&
        message.test(error.message),
      JSON.stringify(option),
    );
  }
});
