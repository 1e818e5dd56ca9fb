import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controller, testApp } from '../helpers/app.ts';

// A `const` in a route schema (an expected token, say) used to come back in the 400 as
// `details.errors[].params.allowedValue`.
test("a schema's const value is not echoed in the validation problem", async () => {
  const { app } = testApp({ env: 'production' });
  app.registerController(
    controller({
      method: 'GET',
      path: '/hook',
      schema: { headers: { type: 'object', required: ['x-token'], properties: { 'x-token': { const: 'sekret-token-value' } } } },
      handler: () => 'ok',
    }),
  );
  const res = await app.inject({ url: '/hook', headers: { 'x-token': 'guess' } });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().details.errors[0].keyword, 'const');
  assert.doesNotMatch(res.body, /sekret-token-value/);
});
