import { truncateSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { staticApp, staticSite } from './static-fixture.ts';

const SIZE = 64 * 1024 * 1024;

test('a large file is streamed with backpressure: a client that stops reading stops the reads from disk', async (t: TestContext) => {
  const { root } = staticSite(t);
  const file = join(root, 'large.bin');
  writeFileSync(file, '');
  truncateSync(file, SIZE); // sparse: 64 MiB of zeros that cost no disk
  const { port, app } = await staticApp(t, root);
  const before = process.memoryUsage().arrayBuffers;
  let bytes = 0;
  const { promise: paused, resolve: onPaused } = Promise.withResolvers<IncomingMessage>();
  const req = request({ host: '127.0.0.1', port, path: '/static/large.bin', agent: false }, (res) => {
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    res.once('data', () => {
      res.pause();
      onPaused(res);
    });
  });
  req.end();
  const res = await paused;
  t.assert.strictEqual(res.headers['content-length'], String(SIZE));
  // had the server read ahead of the socket, it would hold the whole file: 64 MiB
  await sleep(300);
  const held = process.memoryUsage().arrayBuffers - before;
  t.assert.ok(held < 16 * 1024 * 1024, `${Math.round(held / 1024)} KiB held while the client does not read`);
  t.assert.deepStrictEqual(app.requestRoutes().inFlight, ['/static/*'], 'the response is still being sent');
  const ended = new Promise((resolve) => res.once('end', resolve));
  res.resume();
  await ended;
  t.assert.strictEqual(bytes, SIZE, 'all of it arrives once the client reads again');
});
