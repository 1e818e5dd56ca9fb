import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { msg } from '../../src/ipc/protocol.ts';
import { EARLY_WORKER_ENV, LOAD_AHEAD, WORKER_ENV } from '../../src/process/worker-env.ts';
import { runCliInGroup } from '../helpers/cli.ts';
import { startCluster, tempFiles } from '../helpers/cluster.ts';

/**
 * `flotilla start` forks its first worker before it reads the config (src/primary/early-worker.ts):
 * that process becomes the first slot's worker once the config is valid, and is killed when the
 * command ends without it; while it waits it ignores the process group's signals, and a lost
 * channel ends it.
 */

/** The environment a live process started with, or undefined when it is gone (Linux `/proc`). */
function environOf(pid: number): Map<string, string> | undefined {
  try {
    const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
    return new Map(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  } catch {
    return undefined;
  }
}

/** The pids of the live processes whose environment holds `name=value`. */
function processesWith(name: string, value: string): number[] {
  const pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  return pids.map(Number).filter((pid) => environOf(pid)?.get(name) === value);
}

/** Prints `waiting` on stderr once the process listens for messages (worker-entry.ts's wait for `flotilla:start`). */
const SAYS_WAITING = `data:text/javascript,process.on('newListener', (event) => { if (event === 'message') process.stderr.write('waiting\\n'); });`;

test('the first slot is served by the worker forked before the config was read; the others are forked with it', async (t: TestContext) => {
  const cluster = startCluster(t);
  const { workers } = await cluster.ready();
  const first = environOf(workers.get(0) as number);
  t.assert.strictEqual(first?.get(EARLY_WORKER_ENV), LOAD_AHEAD, 'slot 0 started before the config was read, loading ahead');
  t.assert.strictEqual(first?.has(WORKER_ENV), false, 'its start-up data came in flotilla:start');
  const second = environOf(workers.get(1) as number);
  t.assert.strictEqual(second?.has(EARLY_WORKER_ENV), false);
  t.assert.ok(second?.has(WORKER_ENV), 'slot 1 was forked with its start-up data');
});

test("the early worker's variable in the user's environment makes no other worker wait", async (t: TestContext) => {
  const cluster = startCluster(t, { env: { [EARLY_WORKER_ENV]: '1' } });
  const { workers } = await cluster.ready();
  t.assert.strictEqual(workers.size, 2);
});

test('a config error ends the command with exit 2 and leaves no worker behind', async (t: TestContext) => {
  const dir = tempFiles(t, { 'app.yaml': 'serviceName: early\nwokers: 2\nservice: ./service.ts\n' });
  const token = randomUUID();
  const run = await runCliInGroup(t, ['start', '--config', 'app.yaml'], {
    cwd: dir,
    env: { ...process.env, EARLY_WORKER_TEST: token },
    execArgv: ['--conditions=source'],
    timeoutMs: 60_000,
  });
  t.assert.strictEqual(run.code, 2, run.stderr);
  t.assert.match(run.stderr, /app\.yaml:2: wokers: unknown key/);
  for (const deadline = Date.now() + 5_000; processesWith('EARLY_WORKER_TEST', token).length > 0 && Date.now() < deadline; )
    await sleep(50);
  t.assert.deepStrictEqual(processesWith('EARLY_WORKER_TEST', token), [], 'no process of the command is left');
});

test('waiting for flotilla:start, it ignores other messages and SIGTERM; a lost channel ends it', async (t: TestContext) => {
  const entry = fileURLToPath(new URL('../../src/worker/worker-entry.ts', import.meta.url));
  const child = fork(entry, [], {
    execArgv: ['--conditions=source', '--import', SAYS_WAITING],
    env: { ...process.env, [EARLY_WORKER_ENV]: '1' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('waiting')) resolve();
    });
    void exited.then(() => reject(new Error(`it exited before it waited: ${stderr}`)));
  });
  child.send(msg.ping(1));
  child.kill('SIGTERM');
  const outcome = await Promise.race([exited.then(() => 'exited'), sleep(500).then(() => 'waiting')]);
  t.assert.strictEqual(outcome, 'waiting', 'SIGTERM and the ping left it waiting');
  child.disconnect();
  t.assert.strictEqual(await exited, 1, 'the lost channel ended it');
});
