import { createServer } from 'node:http';
import { type TestContext, test } from 'node:test';
import { httpCheck } from '../../../src/app/health/http-check.ts';
import { controller, testApp } from '../../helpers/app.ts';

/** A dependency that answers `status`, or never answers when `hang`. */
async function dependency(t: TestContext, answer: { status?: number; hang?: boolean }) {
  const seen: { method: string; key: string | undefined }[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', key: req.headers['x-api-key'] as string | undefined });
    if (!answer.hang) res.writeHead(answer.status ?? 200).end('body is discarded');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/health`, seen };
}

test('passes on a 2xx, sending the method and headers asked for; named after the host by default', async (t: TestContext) => {
  const dep = await dependency(t, { status: 204 });
  const check = httpCheck(dep.url, { method: 'HEAD', headers: { 'x-api-key': 'k' } });
  t.assert.strictEqual(check.name, new URL(dep.url).host);
  await check.check(AbortSignal.timeout(2_000));
  t.assert.deepStrictEqual(dep.seen, [{ method: 'HEAD', key: 'k' }]);
});

test('fails on an unexpected status, naming it; expectStatus widens what passes', async (t: TestContext) => {
  const dep = await dependency(t, { status: 503 });
  await t.assert.rejects(httpCheck(dep.url).check(AbortSignal.timeout(2_000)), /answered 503/);
  await httpCheck(dep.url, { expectStatus: [503] }).check(AbortSignal.timeout(2_000));
});

test("a dependency that hangs is cut by the checker's signal", async (t: TestContext) => {
  const dep = await dependency(t, { hang: true });
  await t.assert.rejects(httpCheck(dep.url, { name: 'slow' }).check(AbortSignal.timeout(100)));
});

test('in /health: 200 with the dependency up, 503 with it down', async (t: TestContext) => {
  const up = await dependency(t, { status: 200 });
  const down = await dependency(t, { status: 500 });
  const { app } = testApp({ health: { timeoutMs: 1_000 } });
  app.registerController(controller({ method: 'GET', path: '/x', handler: () => 'x' }));
  app.registerHealthChecker(httpCheck(up.url, { name: 'up' }));
  t.assert.strictEqual((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  app.registerHealthChecker(httpCheck(down.url, { name: 'down' }));
  const failing = await app.inject({ method: 'GET', url: '/health' });
  t.assert.strictEqual(failing.statusCode, 503);
  t.assert.strictEqual(failing.json().checks.down.status, 'fail');
});
