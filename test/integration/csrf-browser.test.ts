import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { App } from '../../src/index.ts';
import { controller } from '../helpers/app.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { sink } from '../helpers/sink.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const skip = requireTool('chromium');

const page = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;

/** A shop (its form posts to itself) and another origin whose page posts a form to the shop. */
let shop: App;
let other: App;
let shopOrigin: string;
let otherOrigin: string;
let browser: Browser;

async function listen(app: App): Promise<string> {
  void app.listen();
  const { port } = await app.ready();
  return `http://127.0.0.1:${port}`;
}

before(async () => {
  if (skip) return;
  const options = { logStream: sink(), handleSignals: false };
  shop = new App({ host: '127.0.0.1', port: 0, logging: { requests: false } }, options);
  shop.registerController(
    controller(
      {
        method: 'GET',
        path: '/form',
        handler: (ctx) =>
          ctx.send(
            page('<form method="post" action="/orders" id="f"><input name="item" value="tea"><button>Buy</button></form>'),
            'text/html',
          ),
      },
      { method: 'POST', path: '/orders', body: 'form', handler: (ctx) => ctx.send(`ordered ${(ctx.body as { item: string }).item}`) },
    ),
  );
  shopOrigin = await listen(shop);
  other = new App({ host: '127.0.0.1', port: 0, logging: { requests: false } }, options);
  other.registerController(
    controller({
      method: 'GET',
      path: '/attack',
      handler: (ctx) =>
        ctx.send(
          page(
            `<form method="post" action="${shopOrigin}/orders" id="f"><input name="item" value="everything"></form><script>document.getElementById('f').submit()</script>`,
          ),
          'text/html',
        ),
    }),
  );
  otherOrigin = await listen(other);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-quic'],
  });
});

after(async () => {
  await browser?.close();
  await shop?.close();
  await other?.close();
});

test('a real browser: a form posted from another origin is refused 403, the same-origin one goes through', {
  skip,
  timeout: 60_000,
}, async () => {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const refused = tab.waitForResponse((r) => r.url() === `${shopOrigin}/orders`);
  await tab.goto(`${otherOrigin}/attack`);
  const response = await refused;
  assert.equal(response.status(), 403);
  // another port of the same host: same site, another origin (and `Origin: null` under the attacker page's no-referrer policy)
  assert.equal((await response.request().allHeaders())['sec-fetch-site'], 'same-site');
  assert.match(await response.text(), /CROSS_ORIGIN_REQUEST/);

  await tab.goto(`${shopOrigin}/form`);
  const accepted = tab.waitForResponse((r) => r.url() === `${shopOrigin}/orders`);
  await tab.click('button');
  const ok = await accepted;
  assert.equal(ok.status(), 200);
  assert.equal(await ok.text(), 'ordered tea');
  await context.close();
});
