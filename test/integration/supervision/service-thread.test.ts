import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ClusterProcess, configYaml } from '../../../tools/cluster-process.ts';
import { byMsg, CLI, tempFiles } from '../../helpers/cluster.ts';

const INDEX = pathToFileURL(join(import.meta.dirname, '../../../src/index.ts')).href;

/** A job that throws outside its run (an uncaught exception of the service thread) on its second tick. */
const SERVICE = `import { CronScheduler, defineService } from '${INDEX}';
let ticks = 0;
export default defineService((app) => {
  app.registerScheduler(new CronScheduler([{ name: 'tick', cron: '* * * * * *', run: () => {
    ticks++;
    app.logger.info({ ticks }, 'service thread tick');
    if (ticks === 2) setTimeout(() => { throw new Error('the job broke its thread'); }, 1);
  } }]));
});
`;

test('a service thread that dies is restarted with backoff, and its schedulers run again', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': SERVICE, 'app.yaml': configYaml({ serviceName: 'thread', service: './service.ts' }, {}) });
  const cluster = new ClusterProcess({ cli: CLI, configFile: join(dir, 'app.yaml') });
  t.after(() => cluster.kill());
  await cluster.ready();

  const died = await cluster.waitFor(byMsg('the service thread exited unexpectedly: restarting it'), 'the thread dying', 10_000);
  t.assert.match(String((died['err'] as { message?: string } | undefined)?.message), /the job broke its thread/);
  // a new thread starts counting again from its first tick: the module state is its own
  await cluster.waitFor(
    (l) => l.msg === 'service thread tick' && l['ticks'] === 1 && l.at > died.at,
    'the restarted thread ticking',
    10_000,
  );
  t.assert.strictEqual(cluster.child.exitCode, null, 'the primary lives on');

  cluster.signal('SIGTERM');
  t.assert.strictEqual((await cluster.exit(12_000)).code, 0);
});
