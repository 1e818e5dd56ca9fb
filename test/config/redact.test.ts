import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactConfig } from '../../src/config/redact.ts';
import { resolveConfig } from '../../src/config/validate.ts';

test('values of secret-looking keys are redacted, at any depth', () => {
  const input = {
    db: { password: 'hunter2', passwd: 1234, apiKey: 'k', api_key: 'k', privateKey: 'pem', clientSecret: 's' },
    list: [{ token: 't', name: 'visible' }],
    Authorization: 'Bearer x',
    credentials: { user: 'u' },
  };
  assert.deepEqual(redactConfig(input), {
    db: {
      password: '[redacted]',
      passwd: '[redacted]',
      apiKey: '[redacted]',
      api_key: '[redacted]',
      privateKey: '[redacted]',
      clientSecret: '[redacted]',
    },
    list: [{ token: '[redacted]', name: 'visible' }],
    Authorization: '[redacted]',
    credentials: '[redacted]',
  });
});

test('the coordinator URL: user info and a password in the query are redacted', () => {
  assert.deepEqual(
    redactConfig({
      coordination: { url: 'rediss://:s3cret@redis.internal:6380/0' },
      other: 'postgresql://flotilla@db.internal/app?sslmode=require&password=s3cret&application_name=x',
    }),
    {
      coordination: { url: 'rediss://[redacted]@redis.internal:6380/0' },
      other: 'postgresql://[redacted]@db.internal/app?sslmode=require&password=[redacted]&application_name=x',
    },
  );
});

test('credentials inside URLs are redacted, the rest of the URL kept', () => {
  assert.deepEqual(
    redactConfig({
      url: 'postgres://app:s3cr@t@db.internal:5432/app?ssl=true',
      servers: ['https://user:pass@api.example.com - prod', 'https://api.example.com/a@b - plain'],
      token_url: 'https://ghp_abc@github.com',
    }),
    {
      url: 'postgres://[redacted]@db.internal:5432/app?ssl=true',
      servers: ['https://[redacted]@api.example.com - prod', 'https://api.example.com/a@b - plain'],
      token_url: '[redacted]',
    },
  );
});

test('booleans under secret-looking keys are switches and stay visible', () => {
  const config = resolveConfig({ cors: { origins: ['https://a.example.com'], credentials: true } });
  const redacted = redactConfig(config) as { cors: { credentials: unknown }; port: unknown };
  assert.equal(redacted.cors.credentials, true);
  assert.equal(redacted.port, 3000);
});

test('the copy is deep, unfrozen, and leaves the input untouched', () => {
  const config = resolveConfig({ docs: { servers: ['https://u:p@x.example.com'] } });
  const redacted = redactConfig(config) as { docs: { servers: string[] } };
  assert.deepEqual(config.docs.servers, ['https://u:p@x.example.com']);
  assert.deepEqual(redacted.docs.servers, ['https://[redacted]@x.example.com']);
  assert.equal(Object.isFrozen(redacted.docs), false);
});

test('__proto__ keys and cycles are copied safely', () => {
  const input = JSON.parse('{"__proto__": {"password": "p"}, "a": {}}') as Record<string, unknown>;
  (input['a'] as Record<string, unknown>)['self'] = input['a'];
  const redacted = redactConfig(input);
  assert.equal(Object.getPrototypeOf(redacted), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(redacted, '__proto__')?.value, { password: '[redacted]' });
  const a = redacted['a'] as Record<string, unknown>;
  assert.equal(a['self'], a);
});

test('cookies.secrets: each secret is redacted, their number kept', () => {
  const config = resolveConfig({ cookies: { secrets: ['a'.repeat(32), 'b'.repeat(40)] } });
  assert.deepEqual(redactConfig(config).cookies, { secrets: ['[redacted]', '[redacted]'] });
  assert.ok(!JSON.stringify(redactConfig(config)).includes('a'.repeat(32)));
});
