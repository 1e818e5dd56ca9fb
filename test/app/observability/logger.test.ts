import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoTime, redactCredentials } from '../../../src/app/observability/logger.ts';

test('isoTime is the current time as pino expects it, formatted at most once per millisecond', async () => {
  const before = Date.now();
  const first = isoTime();
  const match = /^,"time":"(.+)"$/.exec(first);
  assert.ok(match, first);
  const at = Date.parse(match[1] ?? '');
  assert.ok(at >= before && at <= Date.now(), 'the current time');
  assert.equal(new Date(at).toISOString(), match[1], 'ISO 8601 with milliseconds');
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.notEqual(isoTime(), first, 'it moves on');
});

test('credential headers are redacted at the top level and one level down, without touching the caller’s objects', () => {
  const headers = { authorization: 'Bearer s3cret', Cookie: 'sid=1', accept: '*/*' };
  const line = { headers, req: { headers }, other: 1 };
  const out = redactCredentials(line);
  assert.deepEqual(out['headers'], { authorization: '[redacted]', Cookie: '[redacted]', accept: '*/*' });
  assert.deepEqual((out['req'] as { headers: unknown }).headers, out['headers']);
  assert.equal(headers.authorization, 'Bearer s3cret');
  assert.equal(redactCredentials({ a: 1 }).a, 1);
});
