import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { get, tempFiles } from '../helpers/cluster.ts';
import { Dev } from '../helpers/dev.ts';

/**
 * `flotilla dev` in a project of its own: readable logs, a banner saying where
 * everything answers, and on a save a rolling restart onto the new code with
 * no failed request; a save that breaks the service is reported readably
 * while the old worker keeps serving.
 */

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;

/** The project's service: `GET /hello` → `{ answer }`; `before` goes above the default export. */
function service(answer: string, { before = '', exportLine = 'export default defineService((app) => {' } = {}): string {
  return [
    `import { defineService } from '${INDEX}';`,
    before,
    exportLine,
    `  app.registerController({ routes: () => [{ method: 'GET', path: '/hello', handler: () => ({ answer: '${answer}' }) }] });`,
    '});',
    '',
  ].join('\n');
}

const APP_YAML = [
  'serviceName: dev-it',
  'host: 127.0.0.1',
  'port: 0',
  'service: ./service.ts',
  'metrics:',
  '  host: 127.0.0.1',
  '  port: 0',
  '',
].join('\n');

/** The bound: a saved change is served within this long. */
const RELOAD_BOUND_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a line of output is a JSON log line (what `flotilla start` writes, and `dev` must not). */
function isJsonLine(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/** `GET /hello`'s answer on a fresh connection. */
async function answer(port: number): Promise<string> {
  const reply = await get(port, '/hello');
  if (reply.status !== 200) throw new Error(`GET /hello answered ${reply.status}: ${reply.body}`);
  return (JSON.parse(reply.body) as { answer: string }).answer;
}

/** Polls `GET /hello` until it answers `expected`; resolves with how long that took from `since`. */
async function servedWithin(port: number, expected: string, since: number, timeoutMs: number): Promise<number> {
  for (;;) {
    const got = await answer(port);
    const elapsed = performance.now() - since;
    if (got === expected) return elapsed;
    if (elapsed > timeoutMs) throw new Error(`still answering '${got}' ${Math.round(elapsed)} ms after the save, expected '${expected}'`);
    await sleep(25);
  }
}

/** GET /health on a fresh connection, again and again until stopped: every answer that is not a 200 is a failure. */
function healthLoop(port: number) {
  const state = { ok: 0, failures: [] as string[], running: true };
  const done = (async () => {
    while (state.running) {
      try {
        const reply = await get(port, '/health');
        if (reply.status === 200) state.ok++;
        else state.failures.push(`${new Date().toISOString()} ${reply.status}: ${reply.body}`);
      } catch (error) {
        state.failures.push(`${new Date().toISOString()} ${String(error)}`);
      }
      await sleep(20);
    }
  })();
  return {
    state,
    stop: async () => {
      state.running = false;
      await done;
    },
  };
}

test('flotilla dev: readable logs, a banner, a save served within 3 s with no failed request, a broken save keeps the old worker', async (t: TestContext) => {
  const dir = tempFiles(t, { 'service.ts': service('one'), 'app.yaml': APP_YAML });
  const servicePath = join(dir, 'service.ts');
  const dev = new Dev(t, dir);

  // the banner, once the worker listens
  const banner = await dev.until(() => /^ {2}API\s+http:\/\/127\.0\.0\.1:(\d+)\/$/m.exec(dev.stdout) ?? undefined, 'the banner');
  const port = Number(banner[1]);
  t.assert.ok(port > 0);
  t.assert.match(dev.stdout, /^dev-it is running \(flotilla dev: 1 worker, restarts on save\)$/m);
  t.assert.match(dev.stdout, new RegExp(`^ {2}docs\\s+http://127\\.0\\.0\\.1:${port}/docs$`, 'm'));
  t.assert.match(dev.stdout, new RegExp(`^ {2}health\\s+http://127\\.0\\.0\\.1:${port}/health$`, 'm'));
  const metrics = /^ {2}metrics\s+http:\/\/127\.0\.0\.1:(\d+)\/metrics$/m.exec(dev.stdout);
  t.assert.ok(
    metrics !== null && Number(metrics[1]) > 0 && Number(metrics[1]) !== port,
    `a metrics URL with a port of its own${dev.tail()}`,
  );
  t.assert.strictEqual(dev.stdout.match(/is running \(flotilla dev/g)?.length, 1, 'one banner');
  t.assert.strictEqual((await get(Number(metrics[1]), '/metrics')).status, 200);

  const health = healthLoop(port);
  t.after(() => health.stop());
  t.assert.strictEqual(await answer(port), 'one');

  // pretty logs: human-readable lines, none of them JSON
  const logLines = dev.lines.filter((line) => line.trim() !== '');
  t.assert.ok(
    logLines.some((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: /.test(line)),
    `time-stamped readable lines${dev.tail()}`,
  );
  t.assert.deepStrictEqual(logLines.filter(isJsonLine), [], 'no JSON line');

  // an edit is served within 3 s of the save (once the start-up is over: the primary's part of the service is loaded last)
  // (a service with no scheduler and no hook for the primary ends its thread instead of starting it)
  await dev.untilCount(/primary part of the service started|its thread ends/, 1, "the primary's part of the service");
  const reloads = dev.lines.filter((line) => /reload: done/.test(line)).length;
  writeFileSync(servicePath, service('two'));
  const elapsed = await servedWithin(port, 'two', performance.now(), 20_000);
  t.diagnostic(`the edit was served ${Math.round(elapsed)} ms after the save`);
  t.assert.ok(
    elapsed <= RELOAD_BOUND_MS,
    `the new response was served ${Math.round(elapsed)} ms after the save (at most ${RELOAD_BOUND_MS})`,
  );
  await dev.untilCount(/reload: done/, reloads + 1, 'the reload done');
  t.assert.match(dev.stdout, /changed: restarting the worker/);

  // a syntax error: said readably, the old worker keeps serving the old response
  writeFileSync(servicePath, service('three', { exportLine: 'export defau lt defineService((app) => {' }));
  await dev.untilCount(/reload failed/, 1, 'the failed reload');
  const syntax = dev.lines.filter((line) => /SyntaxError/.test(line));
  t.assert.ok(syntax.length > 0, `the SyntaxError is in the output${dev.tail()}`);
  t.assert.deepStrictEqual(syntax.filter(isJsonLine), [], 'the error is not a JSON line');
  t.assert.ok(
    dev.lines.some((line) => line.includes('export defau lt defineService') && !isJsonLine(line)),
    `the offending source line is shown on a line of its own${dev.tail()}`,
  );
  for (let i = 0; i < 3; i++) t.assert.strictEqual(await answer(port), 'two', 'the old worker answers');

  // a throw at import: the same
  writeFileSync(servicePath, service('three', { before: "throw new Error('broken at import on purpose');" }));
  await dev.untilCount(/reload failed/, 2, 'the second failed reload');
  const thrown = dev.lines.filter((line) => line.includes('broken at import on purpose'));
  t.assert.ok(thrown.length > 0, `the error is in the output${dev.tail()}`);
  t.assert.deepStrictEqual(thrown.filter(isJsonLine), [], 'the error is not a JSON line');
  t.assert.strictEqual(await answer(port), 'two', 'the old worker still answers');

  // fixed: the fixed response is served
  writeFileSync(servicePath, service('four'));
  await servedWithin(port, 'four', performance.now(), 20_000);

  await health.stop();
  t.assert.deepStrictEqual(health.state.failures, [], 'no failed request to /health during the reloads');
  t.assert.ok(health.state.ok > 10, `the health loop ran all along (${health.state.ok} answers)`);
  t.assert.deepStrictEqual(dev.lines.filter((line) => line.trim() !== '').filter(isJsonLine), [], 'no JSON line at any point');

  process.kill(dev.child.pid as number, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    dev.exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`flotilla dev did not exit within 15 s of SIGTERM${dev.tail()}`)), 15_000);
    }),
  ]).finally(() => clearTimeout(timer));
  t.assert.deepStrictEqual(exit, { code: 0, signal: null }, dev.tail());
});
