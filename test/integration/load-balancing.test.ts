import { type TestContext, test } from 'node:test';
import { listeningSocketHolders } from '../../tools/proc.ts';
import { allGone, byMsg, get, startCluster, who } from '../helpers/cluster.ts';

test('with cluster.balancing: primary, requests on separate connections are served by every worker, never by the primary', async (t: TestContext) => {
  const cluster = startCluster(t, { config: { cluster: { balancing: 'primary' } } });
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

test('by default (cluster.balancing: kernel) the workers accept connections themselves, never the primary', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { appPort, workers } = await cluster.ready();
  const workerPids = new Set(workers.values());
  // whichever worker accepts first gets the connection: the spread follows who is free, but only workers answer
  for (let i = 0; i < 20; i++) t.assert.ok(workerPids.has(await who(appPort)));
  if (process.platform === 'linux') {
    // one socket, opened by the primary (node:cluster's SCHED_NONE) and shared with the workers, which accept from it
    const holders = listeningSocketHolders(appPort);
    t.assert.strictEqual(holders.length, 1, 'one listening socket');
    t.assert.deepStrictEqual(new Set(holders[0]), new Set([cluster.pid, ...workerPids]));
  }
  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0);
});

test('with cluster.balancing: kernel and port 0, replacements listen on the port the first workers got', {
  skip: process.platform !== 'linux' && 'reads /proc',
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
  // the replacements share the socket the first workers got, which the primary kept open meanwhile
  const holders = listeningSocketHolders(appPort);
  t.assert.strictEqual(holders.length, 1, 'one listening socket');
  t.assert.deepStrictEqual(new Set(holders[0]), new Set([cluster.pid, ...fresh]));
  const answered = new Set<number>();
  for (let i = 0; i < 20; i++) answered.add(await who(appPort));
  t.assert.ok([...answered].every((pid) => fresh.includes(pid)));
});

test('with cluster.balancing: kernel a stuck worker strands no new connection: the other accepts them all', async (t: TestContext) => {
  // the watchdog off: the stuck worker stays stuck for the whole test, and nothing replaces it
  const cluster = startCluster(t, { config: { cluster: { balancing: 'kernel', heartbeatTimeoutMs: 0 } } });
  const { appPort, workers } = await cluster.ready();
  // the worker that accepts it spins forever: its event loop never accepts again
  get(appPort, '/hang', 60_000).catch(() => {});
  // give it time to be accepted and start spinning (no event to wait for: the stuck worker says nothing)
  await new Promise((resolve) => setTimeout(resolve, 300));
  // one socket for both: the connections the stuck worker does not accept wait for the other, which takes them
  const answered: number[] = [];
  for (let i = 0; i < 20; i++) answered.push(await who(appPort));
  t.assert.strictEqual(new Set(answered).size, 1, 'one worker answered every connection');
  t.assert.ok([...workers.values()].includes(answered[0] as number));
});
