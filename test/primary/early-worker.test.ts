import type { Worker } from 'node:cluster';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { forkEarlyWorker, mayLoadAhead, takeEarlyWorker } from '../../src/primary/early-worker.ts';
import { heapArgsFor } from '../../src/primary/memory-limit.ts';
import { availableCpus } from '../../src/utils/cpus.ts';
import { tempFiles } from '../helpers/cluster.ts';

test('the early worker loads ahead only when the config file can name no preload module', (t: TestContext) => {
  const dir = tempFiles(t, {
    'plain.yaml': 'serviceName: a\nworkers: 2\nservice: ./service.ts\n',
    'preload.yaml': 'serviceName: a\npreload: [./otel.ts]\nservice: ./service.ts\n',
    'flow.yaml': '{ serviceName: a, preload: [./otel.ts], service: ./service.ts }\n',
    'hsts.yaml': 'serviceName: a\nsecurityHeaders: { hsts: { preload: true } }\n',
    'escaped.yaml': 'serviceName: a\n"pre\\x6coad": [./otel.ts]\n',
  });
  const ahead = (name: string) => mayLoadAhead(join(dir, name));
  t.assert.strictEqual(ahead('plain.yaml'), true);
  t.assert.strictEqual(ahead('preload.yaml'), false);
  t.assert.strictEqual(ahead('flow.yaml'), false);
  t.assert.strictEqual(ahead('hsts.yaml'), false, 'the word anywhere says no: the check reads text, not YAML');
  t.assert.strictEqual(ahead('escaped.yaml'), false, 'a backslash could spell the key');
  t.assert.strictEqual(ahead('missing.yaml'), false, 'an unreadable file says no; the commands report it');
  t.assert.strictEqual(mayLoadAhead(null), false, 'no config file');
});

test('the early worker is taken only with the heap flags the config gives the workers; otherwise killed', async (t: TestContext) => {
  // this file's process forks, as the CLI does: the worker waits for flotilla:start, which never comes
  const started = heapArgsFor(availableCpus());
  const exitOf = (worker: Worker) =>
    new Promise<string | null>((resolve) => (worker.isDead() ? resolve('gone') : worker.once('exit', (_, signal) => resolve(signal))));

  forkEarlyWorker(null);
  const refused = takeEarlyWorker([...started, '--max-old-space-size=77']);
  t.assert.strictEqual(refused, undefined, 'another heap share: not taken');
  t.assert.strictEqual(takeEarlyWorker(started), undefined, 'taken once: there is none left');

  forkEarlyWorker(null);
  const taken = takeEarlyWorker(started);
  t.assert.ok(taken !== undefined, 'the same flags: taken');
  t.after(() => taken?.process.kill('SIGKILL'));
  t.assert.deepStrictEqual(
    taken.process.spawnargs.filter((arg) => arg.startsWith('--max-old-space-size')),
    started,
  );
  taken.process.kill('SIGKILL');
  t.assert.strictEqual(await exitOf(taken), 'SIGKILL');
});
