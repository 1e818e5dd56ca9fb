import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { App } from '../../src/index.ts';
import { controller } from '../helpers/app.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { sink } from '../helpers/sink.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const skip = requireTool('chromium');

const page = `<!doctype html><html><head><title>t</title></head><body></body></html>`;

/** A chat service (its page, and a socket `/live` that greets) and a page of another origin. */
let chat: App;
let other: App;
let chatOrigin: string;
let otherOrigin: string;
let browser: Browser;
/** Upgrades that got past the cross-site check to the route's hooks. */
let reached = 0;

async function listen(app: App): Promise<string> {
  void app.listen();
  const { port } = await app.ready();
  return `http://127.0.0.1:${port}`;
}

before(async () => {
  if (skip) return;
  const options = { logStream: sink(), handleSignals: false };
  chat = new App({ host: '127.0.0.1', port: 0, logging: { requests: false } }, options);
  chat.registerController(
    controller(
      { method: 'GET', path: '/', handler: (ctx) => ctx.send(page, 'text/html') },
      {
        method: 'GET',
        path: '/live',
        onRequest: [
          () => {
            reached++;
          },
        ],
        websocket: (socket) => socket.send('hello'),
      },
    ),
  );
  chatOrigin = await listen(chat);
  other = new App({ host: '127.0.0.1', port: 0, logging: { requests: false } }, options);
  other.registerController(controller({ method: 'GET', path: '/', handler: (ctx) => ctx.send(page, 'text/html') }));
  otherOrigin = await listen(other);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-quic'],
  });
});

after(async () => {
  await browser?.close();
  await chat?.close();
  await other?.close();
});

/** Opens `new WebSocket(url)` in the page: its first message, or `error` when the handshake fails. */
const openFrom = (url: string) =>
  new Promise<string>((resolve) => {
    const socket = new WebSocket(url);
    socket.onmessage = (event) => {
      resolve(`message ${String(event.data)}`);
      socket.close();
    };
    socket.onerror = () => resolve('error');
  });

test("a real browser: a page of another origin cannot open the socket; the service's own page can", { skip, timeout: 60_000 }, async () => {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const live = `${chatOrigin.replace('http:', 'ws:')}/live`;
  const handshakes: number[] = [];
  tab.on('websocket', () => handshakes.push(Date.now()));

  await tab.goto(`${otherOrigin}/`);
  assert.equal(await tab.evaluate(openFrom, live), 'error', 'another port of the same host: same-site, another origin');
  assert.equal(reached, 0, 'refused before the route ran');

  await tab.goto(`${chatOrigin}/`);
  assert.equal(await tab.evaluate(openFrom, live), 'message hello');
  assert.equal(reached, 1);
  assert.equal(handshakes.length, 2, 'the browser tried both');
  await context.close();
});
