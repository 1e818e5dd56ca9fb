import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClusterProcess, configYaml, type Predicate } from '../../tools/cluster-process.ts';
import { isAlive } from '../../tools/proc.ts';
import { byMsg, CLI, get, scrapeUntil, tempFiles } from '../helpers/cluster.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/reload/service.ts', import.meta.url));
const BASE = {
  serviceName: 'reload',
  service: SERVICE,
  cluster: { startupTimeoutMs: 10_000, backoffInitialMs: 50, backoffMaxMs: 500, crashLoopFailures: 4, crashLoopWindowMs: 10_000 },
};

/** The greeting the next fresh connection gets, and the pid that answered. */
async function greeting(port: number): Promise<{ greeting: string; pid: number }> {
  const reply = await get(port, '/greeting');
  if (reply.status !== 200) throw new Error(`GET /greeting answered ${reply.status}: ${reply.body}`);
  return JSON.parse(reply.body) as { greeting: string; pid: number };
}

test('SIGHUP reloads the config file: valid edits roll, invalid ones change nothing, workers scale', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const file = join(dir, 'app.yaml');
  const write = (overrides: Record<string, unknown>, raw = '') => writeFileSync(file, configYaml(BASE, overrides) + raw);
  write({ settings: { greeting: 'one' } });
  const cluster = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => cluster.kill());
  const { appPort, metricsPort } = await cluster.ready();
  await cluster.waitFor((l) => l.msg === 'reload fixture: primary part' && l['greeting'] === 'one', 'the service thread');

  // a client on fresh connections all along: no request may fail during any reload
  const failures: string[] = [];
  let running = true;
  const client = (async () => {
    while (running) {
      const reply = await get(appPort, '/health', 5_000).catch((error: Error) => ({ status: 0, body: error.message }));
      if (reply.status !== 200) failures.push(`${reply.status} ${reply.body}`);
    }
  })();
  const hangup = async (done: Predicate, what: string) => {
    const seen = cluster.lines.length;
    cluster.signal('SIGHUP');
    return cluster.waitFor((l) => cluster.lines.indexOf(l) >= seen && done(l), what, 20_000);
  };
  const listening = () => cluster.lines.filter(byMsg('worker listening')).length;

  // a valid edit: every worker and the service thread restart onto it
  write({ settings: { greeting: 'two' } });
  await hangup(byMsg('reload: done, the cluster runs on the new config'), 'the reload');
  for (let i = 0; i < 6; i++) t.assert.strictEqual((await greeting(appPort)).greeting, 'two');
  await cluster.waitFor((l) => l.msg === 'reload fixture: primary part' && l['greeting'] === 'two', 'the new service thread');
  const serving = new Set<number>();
  for (let i = 0; i < 8; i++) serving.add((await greeting(appPort)).pid);

  // settings the service's schema refuses: the first new worker fails, the old ones keep serving
  let before = listening();
  write({ settings: { greeting: '' } });
  await hangup(byMsg('reload failed: a new worker did not come up (see its error above); the old workers keep serving'), 'the failure');
  const refused = cluster.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('a new worker could not start'));
  t.assert.match(String(refused?.msg), /app\.yaml:\d+: settings\.greeting: must NOT have fewer than 1 characters/);
  t.assert.strictEqual(listening(), before, 'no new worker took a slot');
  t.assert.ok([...serving].every(isAlive), 'the old workers live on');
  t.assert.strictEqual((await greeting(appPort)).greeting, 'two');

  // a file the config schema refuses: every problem logged with its line, nothing restarted
  before = listening();
  write({ settings: { greeting: 'three' }, port: 'eighty' }, 'unknownKey: 1\n');
  const invalid = await hangup((l) => typeof l.msg === 'string' && l.msg.startsWith('reload refused: the config is invalid'), 'refusal');
  const problems = (invalid['problems'] ?? []) as string[];
  t.assert.ok(
    problems.some((p) => /app\.yaml:\d+: port: /.test(p)),
    problems.join('\n'),
  );
  t.assert.ok(
    problems.some((p) => /app\.yaml:\d+: unknownKey: unknown key/.test(p)),
    problems.join('\n'),
  );

  // a key that cannot change in place: refused, named
  write({ settings: { greeting: 'three' }, metrics: { port: metricsPort + 1 } });
  const fixed = await hangup((l) => typeof l.msg === 'string' && l.msg.startsWith('reload refused: metrics cannot change'), 'refused');
  t.assert.deepStrictEqual(fixed['keys'], ['metrics']);
  t.assert.strictEqual(listening(), before, 'nothing restarted');
  t.assert.strictEqual((await greeting(appPort)).greeting, 'two');

  // workers 2 → 3 → 1: scaled, the serving workers untouched
  write({ settings: { greeting: 'two' }, workers: 3 });
  await hangup(byMsg('reload: only workers changed: scaled, no worker restarted'), 'scaling up');
  await scrapeUntil(metricsPort, (text) => /^flotilla_workers_up 3$/m.test(text));
  t.assert.ok([...serving].every(isAlive), 'no worker restarted to scale up');
  write({ settings: { greeting: 'two' }, workers: 1 });
  await hangup(byMsg('reload: only workers changed: scaled, no worker restarted'), 'scaling down');
  await scrapeUntil(metricsPort, (text) => /^flotilla_workers_up 1$/m.test(text) && /^flotilla_workers_desired 1$/m.test(text));
  const left = new Set<number>();
  for (let i = 0; i < 6; i++) left.add((await greeting(appPort)).pid);
  t.assert.strictEqual(left.size, 1);

  running = false;
  await client;
  t.assert.deepStrictEqual(failures, [], 'no request failed during the reloads');
  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0);
});

test('a reload during the start-up: the replacements that listen first start the cluster', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const file = join(dir, 'app.yaml');
  writeFileSync(file, configYaml(BASE, { settings: { greeting: 'slow', startDelayMs: 4_000 } }));
  const cluster = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => cluster.kill());
  await cluster.waitFor(byMsg('metrics endpoint listening'), 'the metrics endpoint');
  // the first workers are still in their slow setup: the reload's replacements come up first
  writeFileSync(file, configYaml(BASE, { settings: { greeting: 'fast' } }));
  cluster.signal('SIGHUP');
  const listening = await cluster.waitFor(byMsg('reload cluster listening'), 'the cluster listening');
  const port = (listening['address'] as { port: number }).port;
  t.assert.strictEqual((await greeting(port)).greeting, 'fast');
  await cluster.waitFor(
    (l) => l.msg === 'reload fixture: primary part' && l['greeting'] === 'fast',
    'the service thread, on the new config',
  );
  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0, cluster.tail());
});
