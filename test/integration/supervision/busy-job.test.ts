import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ClusterProcess, configYaml } from '../../../tools/cluster-process.ts';
import { byMsg, CLI, get, tempFiles } from '../../helpers/cluster.ts';

const INDEX = pathToFileURL(join(import.meta.dirname, '../../../src/index.ts')).href;

/** A cron job that computes for 2 s every 3 s, in the primary's service thread. */
const SERVICE = `import { writeSync } from 'node:fs';
import { CronScheduler, defineService } from '${INDEX}';
export default defineService((app) => {
  app.registerController({ routes: () => [{ method: 'GET', path: '/pid', handler: () => ({ pid: process.pid }) }] });
  app.registerScheduler(new CronScheduler([{ name: 'busy', cron: '*/3 * * * * *', run: () => {
    // written at once: the logger's own batch would only be flushed once the job lets the thread breathe
    writeSync(1, JSON.stringify({ msg: 'busy job started', time: new Date().toISOString(), pid: process.pid }) + '\\n');
    const until = Date.now() + 2_000;
    while (Date.now() < until) {}
  } }]));
});
`;

test('a cron job that computes for seconds does not hold up new connections: it runs off the main thread', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': configYaml({ serviceName: 'busy', service: './service.ts' }, {}) });
  const cluster = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml') });
  t.after(() => cluster.kill());
  const { appPort } = await cluster.ready();

  const started = await cluster.waitFor(byMsg('busy job started'), 'the busy job', 10_000);
  t.assert.strictEqual(started.pid, cluster.pid, 'of the primary process');
  // each request on a fresh connection: the primary must accept it and hand it to a worker
  const t0 = Date.now();
  for (let i = 0; i < 10; i++) t.assert.strictEqual((await get(appPort, '/pid', 5_000)).status, 200);
  t.diagnostic(`10 requests in ${Date.now() - t0} ms; seen started ${t0 - started.at} ms after its time`);
  const finished = cluster.lines.filter((l) => l.msg === 'scheduled job succeeded' && l.at >= started.at);
  t.assert.strictEqual(finished.length, 0, 'ten new connections were served while the job was still computing');
  await cluster.waitFor((l) => l.msg === 'scheduled job succeeded' && l.at >= started.at, 'the job finishing', 5_000);
});
