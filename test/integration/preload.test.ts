import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { startCluster, tempFiles } from '../helpers/cluster.ts';

test('a preload module that throws: the cluster says which and exits 1, as for a service that throws', async (t: TestContext) => {
  const dir = tempFiles(t, { 'otel.mjs': 'throw new Error("no collector configured");\n' });
  const cluster = startCluster(t, { config: { preload: [join(dir, 'otel.mjs')] } });
  const exit = await cluster.exit(20_000);
  t.assert.strictEqual(exit.code, 1, cluster.tail());
  t.assert.match(cluster.stderr, /the service failed to start: the preload module .*otel\.mjs failed: Error: no collector configured/);
});
