import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { type TestContext, test } from 'node:test';
import * as Prom from 'prom-client';
import { collectDefaultMetrics, DEFAULT_METRIC_MODULES, Registry } from '../../src/metrics/prom-client.ts';

const require = createRequire(import.meta.url);

test("the default metric modules are prom-client's, in its order, its CPU counters first", (t: TestContext) => {
  const { metricsList } = require('prom-client/lib/defaultMetrics') as { metricsList: string[] };
  t.assert.deepStrictEqual(['processCpuTotal', ...DEFAULT_METRIC_MODULES], metricsList);
});

test("collectDefaultMetrics registers what prom-client's does: names, help, types, order", async (t: TestContext) => {
  const ours = new Registry();
  collectDefaultMetrics({ register: ours, prefix: 'p_', eventLoopMonitoringPrecision: 1_000 });
  const theirs = new Prom.Registry();
  Prom.collectDefaultMetrics({ register: theirs, prefix: 'p_', eventLoopMonitoringPrecision: 1_000 });
  const shape = async (registry: Registry | Prom.Registry) =>
    (await registry.getMetricsAsJSON()).map(({ name, help, type }) => ({ name, help, type: String(type) }));
  t.assert.deepStrictEqual(await shape(ours), await shape(theirs));
});

test('the CPU counters move by the CPU time spent between two scrapes, user plus system in the total', async (t: TestContext) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'cpu_' });
  const read = async () => {
    const values = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, m.values[0]?.value ?? 0]));
    return ['user', 'system', ''].map((kind) => values.get(`cpu_process_cpu_${kind === '' ? '' : `${kind}_`}seconds_total`) ?? 0);
  };
  const [user0 = 0, system0 = 0, total0 = 0] = await read();
  // 50 ms of this process's CPU, as the kernel counts it (not wall time: a loaded machine deschedules)
  const from = process.cpuUsage();
  for (let used = process.cpuUsage(from); used.user + used.system < 50_000; used = process.cpuUsage(from));
  const [user1 = 0, system1 = 0, total1 = 0] = await read();
  t.assert.ok(user1 + system1 - (user0 + system0) >= 0.05, 'the 50 ms are counted');
  t.assert.ok(Math.abs(total1 - total0 - (user1 - user0 + (system1 - system0))) < 1e-9, 'the total is user plus system');
});

test('collecting them loads no OpenTelemetry API (a process with no tracing never loads it)', (t: TestContext) => {
  const script = [
    "import { createRequire } from 'node:module';",
    "import { collectDefaultMetrics, Registry } from './src/metrics/prom-client.ts';",
    'const registry = new Registry();',
    "collectDefaultMetrics({ register: registry, prefix: 'p_' });",
    'await registry.metrics();',
    'const cache = Object.keys(createRequire(import.meta.url).cache);',
    "process.stdout.write(String(cache.some((file) => file.includes('@opentelemetry'))) + ' ' + String(cache.length));",
  ].join('\n');
  const out = execFileSync(process.execPath, ['--conditions=source', '--input-type=module', '-e', script], {
    cwd: new URL('../../', import.meta.url),
    encoding: 'utf8',
  });
  const [otel, modules] = out.split(' ');
  t.assert.strictEqual(otel, 'false');
  t.assert.ok(Number(modules) > 10, 'prom-client modules were loaded through require');
});
