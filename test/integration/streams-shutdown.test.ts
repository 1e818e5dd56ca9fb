import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClusterProcess, configYaml } from '../../tools/cluster-process.ts';
import { CLI, tempFiles } from '../helpers/cluster.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/streams/service.ts', import.meta.url));
const STANDALONE = fileURLToPath(new URL('../fixtures/streams/standalone.ts', import.meta.url));
const DRAIN_MS = 300;

/** Opens `GET /feed` and collects its text; `ended` resolves with the time the stream ended (epoch ms). */
function subscribe(port: number) {
  let text = '';
  const { promise: ended, resolve: end } = Promise.withResolvers<number>();
  const { promise: opened, resolve: open, reject } = Promise.withResolvers<Record<string, unknown>>();
  const req = request({ host: '127.0.0.1', port, path: '/feed', headers: { 'Last-Event-ID': '41' } }, (res) => {
    open(res.headers);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
    });
    res.on('end', () => end(Date.now()));
    res.on('error', () => end(Date.now()));
  });
  req.on('error', reject);
  req.end();
  return { opened, ended, text: () => text, close: () => req.destroy() };
}

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const limit = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > limit) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('standalone: events and heartbeats arrive; SIGTERM ends the feed within the drain delay + 1 s, exit 0', async (t: TestContext) => {
  const child = spawn(process.execPath, ['--conditions=source', STANDALONE], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  await until(() => /PORT \d+/.test(out), 'the port');
  const port = Number(/PORT (\d+)/.exec(out)?.[1]);
  const feed = subscribe(port);
  const headers = await feed.opened;
  t.assert.match(String(headers['content-type']), /^text\/event-stream/);
  t.assert.strictEqual(headers['cache-control'], 'no-cache, no-transform');
  await until(() => feed.text().includes('id: 43') && feed.text().includes(': heartbeat'), 'events and a heartbeat');
  t.assert.match(feed.text(), /event: price\nid: 42\ndata: \{"n":42,/, 'Last-Event-ID reached the handler');
  const signalled = Date.now();
  child.kill('SIGTERM');
  const endedAt = await feed.ended;
  t.assert.ok(endedAt - signalled < DRAIN_MS + 1_000, `the feed ended ${endedAt - signalled} ms after SIGTERM`);
  t.assert.match(feed.text(), /event: bye\ndata: reconnect\n\n$/);
  t.assert.strictEqual(await exited, 0);
  t.assert.ok(Date.now() - signalled < 10_000, 'inside the budget');
});

test('cluster: SIGTERM ends every open feed within the drain delay + 1 s, and the cluster exits 0', async (t: TestContext) => {
  const dir = tempFiles(t, {});
  const file = join(dir, 'app.yaml');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, configYaml({ serviceName: 'streams', service: SERVICE, shutdown: { drainDelayMs: DRAIN_MS } }, {}));
  const cluster = new ClusterProcess({ cli: CLI, configFile: file });
  t.after(() => cluster.kill());
  const { appPort } = await cluster.ready();
  const feeds = [subscribe(appPort), subscribe(appPort), subscribe(appPort)];
  await Promise.all(feeds.map((f) => until(() => f.text().includes('event: price'), 'an event')));
  const signalled = Date.now();
  cluster.signal('SIGTERM');
  const ends = await Promise.all(feeds.map((f) => f.ended));
  for (const endedAt of ends) t.assert.ok(endedAt - signalled < DRAIN_MS + 1_000, `a feed ended ${endedAt - signalled} ms after SIGTERM`);
  const exit = await cluster.exit(12_000);
  t.assert.strictEqual(exit.code, 0);
});
