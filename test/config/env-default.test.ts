import { type TestContext, test } from 'node:test';
import { envFromNodeEnv } from '../../src/config/env-default.ts';
import { resolveConfig } from '../../src/config/validate.ts';

test('NODE_ENV names the env when it is one of the three', (t: TestContext) => {
  for (const env of ['development', 'staging', 'production']) t.assert.strictEqual(envFromNodeEnv(env), env);
  for (const other of [undefined, '', 'test', 'prod', 'Production']) t.assert.strictEqual(envFromNodeEnv(other), undefined);
});

test('resolveConfig: env left out follows NODE_ENV; a given env wins; another NODE_ENV leaves development', (t: TestContext) => {
  const before = process.env['NODE_ENV'];
  t.after(() => {
    if (before === undefined) delete process.env['NODE_ENV'];
    else process.env['NODE_ENV'] = before;
  });
  process.env['NODE_ENV'] = 'production';
  t.assert.strictEqual(resolveConfig({}).env, 'production');
  t.assert.strictEqual(resolveConfig({ env: 'staging' }).env, 'staging');
  process.env['NODE_ENV'] = 'test';
  t.assert.strictEqual(resolveConfig({}).env, 'development');
  delete process.env['NODE_ENV'];
  t.assert.strictEqual(resolveConfig({}).env, 'development');
});
