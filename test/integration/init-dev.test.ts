import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import { CLI, get } from '../helpers/cluster.ts';
import { Dev } from '../helpers/dev.ts';

/**
 * A project as `flotilla init` writes it, flotilla linked into its node_modules as `npm install
 * ../flotilla` links it: `npm test` (the generated test) passes while `flotilla dev` runs in the same
 * folder on the ports of its app.yaml, metrics port included (the first test of a user once bound it
 * and failed as "asynchronous activity after the test ended").
 */

const ROOT = resolve(import.meta.dirname, '../..');

/** A port nothing listens on now: what the project's `METRICS_PORT` names, for dev and its test alike. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

test('the test `flotilla init` writes passes while `flotilla dev` serves the same project', {
  timeout: 120_000,
}, async (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-init-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // not this test runner's context: the project's `node --test` reports on its own stdout
  const { NODE_TEST_CONTEXT: _, ...outside } = process.env;
  const run = (args: string[], env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, args, { cwd: dir, env: { ...outside, ...env }, encoding: 'utf8' });

  await run(['--conditions=source', CLI, 'init']);
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'flotilla'), 'dir');
  const scripts = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  t.assert.strictEqual(scripts['test'], 'node --test "test/**/*.test.ts"');

  // the ports app.yaml reads, the same for dev and for the test: the test must bind neither
  const env = { PORT: String(await freePort()), METRICS_PORT: String(await freePort()), HOST: '127.0.0.1' };
  const dev = new Dev(t, dir, env);
  const banner = await dev.until(() => /^ {2}API\s+http:\/\/[^\s/]+:(\d+)\/$/m.exec(dev.stdout) ?? undefined, 'the banner');
  t.assert.strictEqual(banner[1], env.PORT);
  await dev.untilCount(/watching for changes/, 1, 'the watcher ready');
  t.assert.strictEqual((await get(Number(env.METRICS_PORT), '/metrics')).status, 200, "dev holds the project's metrics port");

  // `npm test`'s command, on flotilla's sources (the link resolves 'flotilla' to src/index.ts)
  const tested = await run(['--conditions=source', '--test', 'test/**/*.test.ts'], env).catch(
    (error: { stdout?: string; stderr?: string }) => {
      t.assert.fail(`the project's test failed while dev ran:\n${error.stdout ?? ''}\n${error.stderr ?? ''}${dev.tail()}`);
    },
  );
  t.assert.match(tested.stdout, /^ℹ pass 4$/m);
  t.assert.match(tested.stdout, /^ℹ fail 0$/m);
  t.assert.doesNotMatch(`${tested.stdout}${tested.stderr}`, /EADDRINUSE|asynchronous activity/);

  // and dev never noticed
  t.assert.strictEqual((await get(Number(env.PORT), '/items?limit=1')).status, 200);
  t.assert.strictEqual((await get(Number(env.METRICS_PORT), '/metrics')).status, 200);
  t.assert.doesNotMatch(dev.stdout + dev.stderr, /EADDRINUSE/);
});
