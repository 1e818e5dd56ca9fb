import { createServer } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ClusterProcess, configYaml } from '../../../tools/cluster-process.ts';
import { CLI, FIXTURE_SERVICE, tempFiles } from '../../helpers/cluster.ts';

const INDEX = pathToFileURL(join(import.meta.dirname, '../../../src/index.ts')).href;

/** `flotilla start` on a config (and service files) of the test's own, until it exits. */
async function start(t: TestContext, config: Record<string, unknown>, files: Record<string, string> = {}) {
  const dir = tempFiles(t, { ...files, 'app.yaml': configYaml({ serviceName: 'fixture', service: FIXTURE_SERVICE }, config) });
  const cluster = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml') });
  t.after(() => cluster.kill());
  const exit = await cluster.exit(15_000);
  const forked = cluster.lines.some((l) => l['worker'] !== undefined || l['workerPid'] !== undefined);
  return { exit, stderr: cluster.stderr, lines: cluster.lines, forked };
}

test('a service module that does not exist is a config error: file:line, exit 2, no fork', async (t: TestContext) => {
  const { exit, stderr, forked } = await start(t, { service: './missing.ts' });
  t.assert.strictEqual(exit.code, 2);
  t.assert.match(stderr, /app\.yaml:\d+: service: .*missing\.ts does not exist/);
  t.assert.strictEqual(forked, false);
});

for (const [where, source, frame] of [
  [
    'at import',
    `import { defineService } from '${INDEX}';\nconst url = process.env.NO_SUCH_VARIABLE;\nif (url === undefined) throw new Error('DATABASE_URL is not set');\nexport default defineService(() => {});\n`,
    'service.ts:3:',
  ],
  [
    'in its setup',
    `import { defineService } from '${INDEX}';\nexport default defineService((app) => {\n  app.registerController(undefined as never);\n});\n`,
    'service.ts:3:',
  ],
] as const) {
  test(`a service that throws ${where} is reported once in one line, and the cluster exits 1 without a crash loop`, async (t: TestContext) => {
    const { exit, stderr, lines } = await start(t, { service: './service.ts' }, { 'service.ts': source });
    t.assert.strictEqual(exit.code, 1);
    const reported = stderr.split('\n').filter((l) => l.startsWith('flotilla: '));
    t.assert.strictEqual(reported.length, 1, `one line on stderr:\n${stderr}`);
    t.assert.match(reported[0] ?? '', /^flotilla: the service failed to start: \w*Error: .+ \(at service\.ts:\d+:\d+\)$/);
    t.assert.ok(reported[0]?.includes(`(at ${frame}`), reported[0]);
    t.assert.ok(!lines.some((l) => l.msg?.includes('crash loop')), 'no crash-loop story');
    t.assert.ok(!lines.some((l) => l.msg === 'worker exited unexpectedly: replacing it'), 'no worker was restarted');
  });
}

// the holder sets SO_REUSEPORT, as a program that means to share the port would: a cluster binds without it,
// and is refused
for (const balancing of ['primary', 'kernel'] as const) {
  test(`a port in use is said in words, and the cluster exits at once (balancing: ${balancing})`, async (t: TestContext) => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen({ port: 0, host: '127.0.0.1', reusePort: true }, resolve));
    t.after(() => blocker.close());
    const port = (blocker.address() as { port: number }).port;
    const { exit, stderr, lines } = await start(t, { port, cluster: { balancing } });
    t.assert.strictEqual(exit.code, 1);
    t.assert.match(stderr, new RegExp(`^flotilla: port ${port} on 127\\.0\\.0\\.1 is already in use$`, 'm'));
    t.assert.ok(!lines.some((l) => l.msg === 'worker exited unexpectedly: replacing it'), 'no restarts');
  });
}

for (const [what, config, message] of [
  [
    'a zero backoff with a huge failure budget',
    { cluster: { backoffInitialMs: 0, backoffMaxMs: 0, crashLoopFailures: 1000 } },
    /cluster\.backoffMaxMs/,
  ],
  ['a worker count far beyond the CPUs', { workers: 1000 }, /workers/],
] as const) {
  test(`fork-storm settings are refused before any fork: ${what}`, async (t: TestContext) => {
    const { exit, stderr, forked } = await start(t, config);
    t.assert.strictEqual(exit.code, 2);
    t.assert.match(stderr, /app\.yaml:\d+: /);
    t.assert.match(stderr, message);
    t.assert.strictEqual(forked, false);
  });
}
