import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { App } from '../../src/index.ts';
import { controller } from '../helpers/app.ts';
import { startCluster } from '../helpers/cluster.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { sink } from '../helpers/sink.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const skip = requireTool('chromium');
const BOOKS = fileURLToPath(new URL('../../examples/books/service.ts', import.meta.url));

/** Another origin (another port): its page posts a form to the catalogue as soon as it loads. */
async function attacker(t: TestContext, target: string): Promise<string> {
  const app = new App({ host: '127.0.0.1', port: 0, logging: { requests: false } }, { logStream: sink(), handleSignals: false });
  const form = `<form method="post" action="${target}" id="f"></form><script>document.getElementById('f').submit()</script>`;
  app.registerController(
    controller({ method: 'GET', path: '/', handler: (ctx) => ctx.send(`<!doctype html><title>prize</title>${form}`, 'text/html') }),
  );
  void app.listen();
  t.after(() => app.close());
  return `http://127.0.0.1:${(await app.ready()).port}`;
}

test('a real browser logs in to the example through its front page form, and another origin cannot post to it', {
  skip,
  timeout: 120_000,
}, async (t: TestContext) => {
  const cluster = await startCluster(t, {
    // the example imports 'flotilla': its sources, not a build that may be missing or stale
    execArgv: ['--conditions=source'],
    config: {
      service: BOOKS,
      serviceName: 'books',
      cookies: { secrets: ['a-secret-for-the-login-test-of-32-chars'] },
      // in production (flotilla start's default) the reader's password must be given: the development one is refused
      settings: { databaseFile: ':memory:', seedBooks: 3, readerPassword: 'reader', apiKey: 'a-key-of-the-login-test' },
      docs: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
    },
  }).ready(2, 60_000);
  const origin = `http://127.0.0.1:${cluster.appPort}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-quic'],
  });
  t.after(() => browser.close());
  const context = await browser.newContext();
  const page = await context.newPage();

  // the static front page, its script and its stylesheet; nobody is logged in
  await page.goto(`${origin}/`);
  await page.locator('#who[data-state="out"]').waitFor();
  // its own fetch, apart from the login's: waited for, not raced
  await page.locator('#books li').nth(2).waitFor();
  t.assert.equal(await page.locator('#books li').count(), 3, 'the latest books, through the API');
  t.assert.deepStrictEqual(await context.cookies(), []);

  // a wrong password: back to the form, told so, no session
  await page.fill('input[name=password]', 'wrong');
  await Promise.all([page.waitForURL(`${origin}/?login=failed`), page.click('#login button')]);
  await page.locator('#failed:not([hidden])').waitFor();
  t.assert.deepStrictEqual(await context.cookies(), []);

  // the right one: the session cookie, and the page knows who is there
  await page.fill('input[name=password]', 'reader');
  await Promise.all([page.waitForURL(`${origin}/`), page.click('#login button')]);
  await page.locator('#who[data-state="in"]').waitFor();
  t.assert.equal(await page.locator('#who').textContent(), 'Logged in as reader');
  const [cookie] = await context.cookies();
  t.assert.equal(cookie?.name, 'sid');
  t.assert.equal(cookie?.httpOnly, true, 'out of scripts’ reach');
  t.assert.equal(cookie?.sameSite, 'Lax');
  t.assert.ok((cookie?.expires ?? 0) > Date.now() / 1000 + 86_000, 'Max-Age: a day');

  // another origin's page posts a logout form to the catalogue: refused before the handler runs
  const other = await attacker(t, `${origin}/logout`);
  const attack = await context.newPage();
  const refused = attack.waitForResponse((r) => r.url() === `${origin}/logout`);
  await attack.goto(other);
  const response = await refused;
  t.assert.equal(response.status(), 403);
  t.assert.match(await response.text(), /CROSS_ORIGIN_REQUEST/);
  await page.reload();
  await page.locator('#who[data-state="in"]').waitFor();

  // the page's own logout form, same origin: passes, and the session is gone
  await Promise.all([page.waitForURL(`${origin}/`), page.click('#logout button')]);
  await page.locator('#who[data-state="out"]').waitFor();
  t.assert.deepStrictEqual(await context.cookies(), [], 'the cookie is cleared');
  await context.close();
});
