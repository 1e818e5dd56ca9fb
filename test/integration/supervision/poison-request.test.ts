import { type TestContext, test } from 'node:test';
import { isAlive } from '../../../tools/proc.ts';
import { freePort } from '../../../tools/throwaway-server.ts';
import { byMsg, get, type Reply, sample, scrapeUntil, startCluster } from '../../helpers/cluster.ts';

const POISON = 'workers keep dying on requests to this route: it looks like a poison request (they are replaced, never given up on)';
const DEATHS = 10;

test('ten crashing requests right after start-up leave the cluster serving: deaths on requests are no crash loop', async (t: TestContext) => {
  // crashLoopFailures is 4 in the tests' base config and stableAfterMs its default (30 s): every worker that dies here
  // is young, and ten young deaths that counted would end the cluster at the fourth. A fixed port: with balancing:
  // kernel, when both workers are down at once nothing listens, and the next one binds the same port again
  const cluster = startCluster(t, { config: { port: await freePort() } });
  const { appPort, metricsPort } = await cluster.ready();

  /**
   * GET /throw-async; when no worker is up (the primary answered 503 once the request waited past its queue's
   * deadline, or with balancing: kernel the port refused it), again once the next one listens.
   */
  const poisonRequest = async (): Promise<Reply> => {
    for (;;) {
      const listened = cluster.lines.filter(byMsg('worker listening')).length;
      try {
        const reply = await get(appPort, '/throw-async');
        if (reply.status !== 503) return reply;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ECONNREFUSED') throw error;
      }
      await cluster.waitForCount(byMsg('worker listening'), listened + 1, 'a replacement listening');
    }
  };

  for (let i = 1; i <= DEATHS; i++) {
    const pacing = new Promise((r) => setTimeout(r, 500));
    const reply = await poisonRequest();
    t.assert.strictEqual(reply.status, 200, `poison request ${i} is answered (its worker dies after)`);
    const victim = (JSON.parse(reply.body) as { throwing: number }).throwing;
    const death = await cluster.waitFor(byMsg('worker exited unexpectedly: replacing it', { workerPid: victim }), `death ${i}`);
    t.assert.strictEqual(death['receivedRequests'], true, `death ${i} is one on requests`);
    t.assert.strictEqual(death['lastRoute'], '/throw-async', `death ${i} names the route`);
    await pacing; // the next poison request 500 ms after this one
  }

  await cluster.waitForCount(byMsg('worker listening'), 2 + DEATHS, 'every replacement listening');
  t.assert.ok(isAlive(cluster.pid), 'the primary still runs');
  t.assert.ok(!cluster.lines.some(byMsg('workers keep failing early: giving up (crash loop)')), 'no crash loop was declared');
  for (let i = 0; i < 4; i++) t.assert.strictEqual((await get(appPort, '/pid')).status, 200, 'the cluster still serves');

  const metrics = await scrapeUntil(metricsPort, (text) => sample(text, 'flotilla_workers_up') === 2);
  t.assert.strictEqual(sample(metrics, 'flotilla_worker_restarts_total{reason="uncaught-exception"}'), DEATHS);
  t.assert.strictEqual(sample(metrics, 'flotilla_worker_request_deaths_total{route="/throw-async"}'), DEATHS);

  const poison = cluster.lines.filter(byMsg(POISON));
  t.assert.strictEqual(poison.length, 1, 'one line names the poison route, not one per death');
  t.assert.deepStrictEqual([poison[0]?.['level'], poison[0]?.['route'], poison[0]?.['deaths']], ['error', '/throw-async', 3]);
  t.assert.strictEqual(poison[0]?.pid, cluster.pid, 'the primary names it');
});
