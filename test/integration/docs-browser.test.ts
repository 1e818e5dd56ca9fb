import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import setup from '../../examples/books/service.ts';
import { loadConfigFile } from '../../src/config/load-file.ts';
import { App } from '../../src/index.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { sink } from '../helpers/sink.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
// npm test installs the browser where it can (tools/provision.sh); in CI this test must run, elsewhere it may be absent
const skip = requireTool('chromium');

let app: App;
let browser: Browser;
let origin: string;

before(async () => {
  if (skip) return;
  const { config } = loadConfigFile('config/app.yaml', { PORT: '0', METRICS_PORT: '0', NODE_ENV: 'development' });
  app = new App(
    { ...structuredClone(config), host: '127.0.0.1', metrics: { ...config.metrics, host: '127.0.0.1' } },
    { logStream: sink(), handleSignals: false },
  );
  await setup(app);
  void app.listen();
  const { port } = await app.ready();
  origin = `http://127.0.0.1:${port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
});

after(async () => {
  await browser?.close();
  await app?.close();
});

test('the docs page renders the example operations in a real browser, offline', { skip, timeout: 60_000 }, async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  try {
    const response = await page.goto(`${origin}/docs?url=https://example.com/evil.json`);
    assert.equal(response?.status(), 200);
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    const title = (await page.locator('.info .title').textContent()) ?? '';
    assert.match(title, /Book catalogue/);
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    for (const expected of ['/api/books', '/api/books/{id}', '/api/stats', '/health']) {
      assert.ok(
        paths.some((p) => p.replace(/\u200b/g, '') === expected),
        `${expected} is rendered (got ${paths.join(', ')})`,
      );
    }
    assert.ok(
      requests.every((u) => u.startsWith(`${origin}/`) || u.startsWith('data:')),
      `no request leaves localhost: ${requests.filter((u) => !u.startsWith(origin)).join(', ')}`,
    );
    assert.ok(!requests.slice(1).some((u) => u.includes('example.com')), '?url= is ignored');
    assert.ok(requests.includes(`${origin}/docs/openapi.json`), 'the document comes from the docs path');
    assert.deepEqual(problems, [], 'no console errors (a CSP violation would show here)');
  } catch (error) {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-docs-'));
    await page.screenshot({ path: join(dir, 'docs.png'), fullPage: true }).catch(() => {});
    t.diagnostic(`screenshot saved to ${join(dir, 'docs.png')}`);
    throw error;
  } finally {
    await context.close();
  }
});
