import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';

// Overload on HTTP/2: one connection carries many requests, so the worker bounds the streams each
// connection may have open (`limits.concurrentStreams`, SETTINGS_MAX_CONCURRENT_STREAMS) and refuses
// the others with REFUSED_STREAM, which a client may retry; the handlers running never exceed it.
// A well-behaved client waits for a free stream. These clients ignore the server's setting (they
// open their streams before it arrives, assuming 5,000), as a flood would.

const LIMIT = 5;

/** A stream's end: its status, or the code it was reset with. */
type Outcome = { status: number } | { reset: number };

function open(session: ClientHttp2Session, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const stream = session.request({ ':path': path });
    stream.on('response', (headers) => resolve({ status: Number(headers[':status']) }));
    stream.on('error', () => {});
    stream.on('close', () => resolve({ reset: stream.rstCode ?? -1 }));
    stream.resume();
  });
}

async function slowApp(t: TestContext) {
  const release = gate();
  let running = 0;
  let peak = 0;
  const { app } = testApp({ http2: true, limits: { concurrentStreams: LIMIT } });
  app.registerController(
    controller({
      method: 'GET',
      path: '/slow',
      handler: async () => {
        peak = Math.max(peak, ++running);
        await release.promise;
        running--;
        return { ok: true };
      },
    }),
  );
  const port = await serve(t, app);
  const session = connect(`http://127.0.0.1:${port}`, { peerMaxConcurrentStreams: 5_000 });
  session.on('error', () => {});
  t.after(() => session.destroy());
  return { app, release, session, peak: () => peak };
}

test('streams past concurrentStreams are refused with REFUSED_STREAM; the others are served', async (t: TestContext) => {
  const { release, session, peak } = await slowApp(t);
  const outcomes = Array.from({ length: 20 }, () => open(session, '/slow'));
  // the refusals come while the first streams are still in their handlers
  const refused = await Promise.all(outcomes.slice(LIMIT));
  while (peak() < LIMIT) await sleep(5);
  release.resolve();
  const served = await Promise.all(outcomes.slice(0, LIMIT));

  t.assert.deepStrictEqual(served, Array(LIMIT).fill({ status: 200 }));
  t.assert.deepStrictEqual(refused, Array(20 - LIMIT).fill({ reset: constants.NGHTTP2_REFUSED_STREAM }));
  t.assert.strictEqual(peak(), LIMIT, 'never more handlers at once than the limit');
  t.assert.strictEqual(session.closed, false, 'a few refusals do not end the connection');
});

test('a client that keeps opening streams past the limit is cut off: GOAWAY, the connection closed', async (t: TestContext) => {
  const { app, release, session } = await slowApp(t);
  const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  const outcomes = Array.from({ length: LIMIT + 3_000 }, () => open(session, '/slow'));
  // the handlers are still waiting: the flood alone ends the connection
  t.assert.notStrictEqual(await goaway, constants.NGHTTP2_NO_ERROR, 'GOAWAY with an error code');
  await closed;
  release.resolve();
  const ended = await Promise.all(outcomes);
  t.assert.ok(
    ended.every((outcome) => 'reset' in outcome),
    'every stream of the flood ended by a reset',
  );
  // the requests admitted, whose streams died with the connection, count as done: the shutdown does not wait for them
  await app.close();
  t.assert.strictEqual(app.cleanShutdown, true);
});
