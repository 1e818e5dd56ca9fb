import { type TestContext, test } from 'node:test';
import { listeningSocketHolders } from '../../tools/proc.ts';
import { allGone, byMsg, startCluster, who } from '../helpers/cluster.ts';

test('requests on separate connections are served by every worker, never by the primary', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, workers } = await cluster.ready();
  const workerPids = new Set(workers.values());
  t.assert.strictEqual(workerPids.size, 2, 'two distinct worker processes are up');
  t.assert.ok(!workerPids.has(cluster.pid), 'no worker is the primary');

  const served = new Map<number, number>();
  for (let i = 0; i < 40; i++) {
    const pid = await who(appPort);
    served.set(pid, (served.get(pid) ?? 0) + 1);
  }

  t.assert.deepStrictEqual(new Set(served.keys()), workerPids, 'both workers answered, and only them');
  // node:cluster hands connections round-robin: neither worker is starved
  for (const [pid, count] of served) t.assert.ok(count >= 10, `worker ${pid} served only ${count} of 40 requests`);
  if (process.platform === 'linux') {
    t.assert.deepStrictEqual(listeningSocketHolders(appPort), [[cluster.pid]], 'one socket, the primary’s alone');
  }
});

test('with cluster.balancing: kernel the workers accept connections themselves, never the primary', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { balancing: 'kernel' } } });
  const { appPort, workers } = await cluster.ready();
  const workerPids = new Set(workers.values());
  // the kernel picks the accepting worker: the spread is uneven by design, but only workers answer
  for (let i = 0; i < 20; i++) t.assert.ok(workerPids.has(await who(appPort)));
  if (process.platform === 'linux') {
    // port 0: the primary picked one port for all; each worker listens on a SO_REUSEPORT socket of its own
    const holders = listeningSocketHolders(appPort);
    t.assert.deepStrictEqual(new Set(holders.map((pids) => pids.join(','))), new Set([...workerPids].map(String)));
  }
  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0);
});

test('with cluster.balancing: kernel and port 0, replacements listen on the port the first workers got', {
  skip: process.platform !== 'linux' && 'sockets of their own on Linux only',
}, async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { balancing: 'kernel' } } });
  const { appPort, workers } = await cluster.ready();
  const before = [...workers.values()];
  cluster.signal('SIGHUP');
  await cluster.waitFor(byMsg('rolling restart: done'), 'the rolling restart', 20_000);
  const fresh = cluster.lines
    .filter((l) => l.msg === 'worker listening' && !before.includes(l['workerPid'] as number))
    .map((l) => l['workerPid'] as number);
  t.assert.strictEqual(fresh.length, 2);
  await allGone(before);
  // the replacements are on the port the first workers got, each on a socket of its own
  const holders = listeningSocketHolders(appPort);
  t.assert.deepStrictEqual(new Set(holders.map((pids) => pids.join(','))), new Set(fresh.map(String)));
  const answered = new Set<number>();
  for (let i = 0; i < 20; i++) answered.add(await who(appPort));
  t.assert.ok([...answered].every((pid) => fresh.includes(pid)));
});
