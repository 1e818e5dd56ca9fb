import assert from 'node:assert/strict';
import { get } from 'node:http';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';
import type { App } from '../../../src/app/app.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { KError } from '../../../src/errors/k-error.ts';
import { controller, gate, serve, testApp } from '../../helpers/app.ts';

/** A JSON value of about `bytes` bytes, repetitive as real pages are. */
function page(bytes: number) {
  return Array.from({ length: Math.ceil(bytes / 60) }, (_, i) => ({ id: i, title: `Book number ${i}`, shelf: i % 7 }));
}
const BIG = page(5_000);

function decode(encoding: string | undefined, body: Buffer): string {
  if (encoding === 'gzip') return zlib.gunzipSync(body).toString();
  if (encoding === 'br') return zlib.brotliDecompressSync(body).toString();
  if (encoding === 'zstd') return zlib.zstdDecompressSync(body).toString();
  assert.equal(encoding, undefined);
  return body.toString();
}

function compressionApp(config: KConfig = {}): App {
  const { app } = testApp(config);
  app.registerController(
    controller(
      { method: 'GET', path: '/big', handler: () => BIG },
      { method: 'GET', path: '/small', handler: () => ({ ok: true }) },
      { method: 'GET', path: '/huge', handler: () => page(200_000) },
      { method: 'GET', path: '/png', handler: (ctx) => ctx.send(Buffer.alloc(5_000, 1), 'image/png') },
      { method: 'GET', path: '/text', handler: (ctx) => ctx.send('x'.repeat(5_000)) },
      {
        method: 'GET',
        path: '/precompressed',
        handler: (ctx) => {
          ctx.setHeader('Content-Encoding', 'gzip');
          ctx.send(zlib.gzipSync(JSON.stringify(BIG)), 'application/json');
        },
      },
      {
        method: 'GET',
        path: '/no-transform',
        handler: (ctx) => {
          ctx.setHeader('Cache-Control', 'public, no-transform');
          return BIG;
        },
      },
      { method: 'GET', path: '/none', handler: (ctx) => ctx.noContent() },
      {
        method: 'GET',
        path: '/invalid',
        handler: () => {
          throw KError.unprocessable('many problems', { details: { problems: page(3_000) } });
        },
      },
      { method: 'GET', path: '/stream', handler: (ctx) => ctx.send(Readable.from(['a,b\n', '1,2\n'.repeat(2_000)]), 'text/csv') },
      {
        method: 'GET',
        path: '/events',
        handler: (ctx) =>
          ctx.sse(
            (async function* () {
              yield { data: 'x'.repeat(5_000) };
            })(),
          ),
      },
    ),
  );
  return app;
}

async function fetchWith(app: App, url: string, acceptEncoding?: string, method: 'GET' | 'HEAD' = 'GET') {
  const res = await app.inject({ method, url, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });
  const encoding = res.headers['content-encoding'] as string | undefined;
  return { res, encoding, vary: res.headers['vary'], text: method === 'HEAD' ? '' : decode(encoding, res.rawPayload) };
}

describe('compression', () => {
  test('a JSON reply above the threshold is compressed with each encoding, its length the compressed one', async () => {
    const app = compressionApp();
    const json = JSON.stringify(BIG);
    for (const [accept, expected] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['zstd', 'zstd'],
      ['gzip, deflate, br, zstd', 'zstd'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
    ] as const) {
      const { res, encoding, vary, text } = await fetchWith(app, '/big', accept);
      assert.equal(encoding, expected, accept);
      assert.equal(vary, 'Accept-Encoding');
      assert.equal(text, json);
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
      assert.ok(res.rawPayload.length < json.length / 3, `${expected}: ${res.rawPayload.length} of ${json.length}`);
    }
    await app.close();
  });

  test('no Accept-Encoding, identity preferred, identity;q=0 with nothing known, unknown codings: sent as it is, with Vary', async () => {
    const app = compressionApp();
    for (const accept of [undefined, '', 'identity', 'gzip;q=0.5, identity', 'identity;q=0, deflate', 'compress, snappy', 'gzip;q=0']) {
      const { res, encoding, vary, text } = await fetchWith(app, '/big', accept);
      assert.equal(encoding, undefined, String(accept));
      assert.equal(vary, 'Accept-Encoding', String(accept));
      assert.equal(text, JSON.stringify(BIG));
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
    }
    await app.close();
  });

  test('below the threshold: as it is, with Vary; the threshold is configurable', async () => {
    const app = compressionApp();
    const small = await fetchWith(app, '/small', 'gzip');
    assert.equal(small.encoding, undefined);
    assert.equal(small.vary, 'Accept-Encoding');
    await app.close();
    const eager = compressionApp({ compression: { thresholdBytes: 0 } });
    const tiny = await fetchWith(eager, '/small', 'gzip');
    assert.equal(tiny.encoding, 'gzip');
    assert.equal(tiny.text, '{"ok":true}');
    await eager.close();
    const lazy = compressionApp({ compression: { thresholdBytes: 1_000_000 } });
    assert.equal((await fetchWith(lazy, '/big', 'gzip')).encoding, undefined);
    await lazy.close();
  });

  test('only compressible types: text is, a PNG is not (and gets no Vary)', async () => {
    const app = compressionApp();
    const text = await fetchWith(app, '/text', 'br');
    assert.equal(text.encoding, 'br');
    assert.equal(text.text, 'x'.repeat(5_000));
    const png = await fetchWith(app, '/png', 'br');
    assert.equal(png.encoding, undefined);
    assert.equal(png.vary, undefined);
    assert.equal(png.res.rawPayload.length, 5_000);
    await app.close();
  });

  test('a reply that carries a Content-Encoding already is left alone', async () => {
    const app = compressionApp();
    const { res, encoding, vary, text } = await fetchWith(app, '/precompressed', 'br');
    assert.equal(encoding, 'gzip');
    assert.equal(vary, undefined);
    assert.equal(text, JSON.stringify(BIG));
    assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
    await app.close();
  });

  test('Cache-Control: no-transform, HEAD and 204 are not compressed', async () => {
    const app = compressionApp();
    const kept = await fetchWith(app, '/no-transform', 'gzip');
    assert.equal(kept.encoding, undefined);
    assert.equal(kept.vary, 'Accept-Encoding');
    const head = await fetchWith(app, '/big', 'gzip', 'HEAD');
    assert.equal(head.res.statusCode, 200);
    assert.equal(head.encoding, undefined);
    assert.equal(head.vary, 'Accept-Encoding');
    assert.equal(Number(head.res.headers['content-length']), Buffer.byteLength(JSON.stringify(BIG)));
    const none = await fetchWith(app, '/none', 'gzip');
    assert.equal(none.res.statusCode, 204);
    assert.equal(none.encoding, undefined);
    assert.equal(none.vary, undefined);
    await app.close();
  });

  test('a large body is compressed off the main thread, the same bytes out', async () => {
    const app = compressionApp();
    for (const accept of ['gzip', 'br', 'zstd']) {
      const { res, encoding, text } = await fetchWith(app, '/huge', accept);
      assert.equal(encoding, accept);
      assert.equal(text, JSON.stringify(page(200_000)));
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
    }
    await app.close();
  });

  test('problem responses above the threshold are compressed too', async () => {
    const app = compressionApp();
    const { res, encoding, text } = await fetchWith(app, '/invalid', 'gzip');
    assert.equal(res.statusCode, 422);
    assert.equal(encoding, 'gzip');
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(text).detail, 'many problems');
    const missing = await fetchWith(app, '/nowhere', 'gzip');
    assert.equal(missing.res.statusCode, 404);
    assert.equal(missing.encoding, undefined);
    assert.equal(missing.vary, 'Accept-Encoding');
    await app.close();
  });

  test('a streamed reply is compressed, without a Content-Length', async () => {
    const app = compressionApp();
    for (const accept of ['gzip', 'br', 'zstd']) {
      const { res, encoding, vary, text } = await fetchWith(app, '/stream', accept);
      assert.equal(encoding, accept);
      assert.equal(vary, 'Accept-Encoding');
      assert.equal(res.headers['content-length'], undefined);
      assert.equal(text, `a,b\n${'1,2\n'.repeat(2_000)}`);
    }
    await app.close();
  });

  test('event streams are never compressed', async () => {
    const app = compressionApp();
    const res = await app.inject({ url: '/events', headers: { 'accept-encoding': 'gzip, br, zstd' } });
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(res.headers['vary'], undefined);
    assert.match(res.body, /^: connected\n\ndata: x{5000}\n\n/);
    await app.close();
  });

  test('compression.enabled: false sends everything as it is, with no Vary', async () => {
    const app = compressionApp({ compression: { enabled: false } });
    const { encoding, vary } = await fetchWith(app, '/big', 'gzip, br, zstd');
    assert.equal(encoding, undefined);
    assert.equal(vary, undefined);
    await app.close();
  });

  test('compression.encodings limits and orders what is offered', async () => {
    const app = compressionApp({ compression: { encodings: ['gzip', 'br'] } });
    assert.equal((await fetchWith(app, '/big', 'zstd')).encoding, undefined);
    assert.equal((await fetchWith(app, '/big', 'zstd, br, gzip')).encoding, 'gzip');
    await app.close();
    assert.throws(() => testApp({ compression: { encodings: ['deflate' as 'gzip'] } }), /compression\/encodings|encodings/);
  });
});

describe('a compressed stream, over a socket', () => {
  test('each chunk reaches the client compressed as it is produced, before the stream ends', async (t) => {
    const { app } = testApp();
    let release = gate();
    app.registerController(
      controller({
        method: 'GET',
        path: '/feed',
        handler: (ctx) =>
          ctx.send(
            (async function* () {
              yield `${JSON.stringify({ tick: 1 })}\n`;
              await release.promise;
              yield `${JSON.stringify({ tick: 2 })}\n`;
            })(),
            'application/x-ndjson',
          ),
      }),
    );
    const port = await serve(t, app);
    for (const encoding of ['gzip', 'br', 'zstd'] as const) {
      release = gate();
      const lines: string[] = [];
      const firstLine = Promise.withResolvers<void>();
      const ended = Promise.withResolvers<void>();
      get({ port, host: '127.0.0.1', path: '/feed', headers: { 'accept-encoding': encoding } }, (res) => {
        assert.equal(res.headers['content-encoding'], encoding);
        const decoder =
          encoding === 'gzip' ? zlib.createGunzip() : encoding === 'br' ? zlib.createBrotliDecompress() : zlib.createZstdDecompress();
        res.pipe(decoder);
        decoder.setEncoding('utf8');
        decoder.on('data', (text: string) => {
          lines.push(...text.split('\n').filter((l) => l !== ''));
          firstLine.resolve();
        });
        decoder.on('end', () => ended.resolve());
      }).on('error', ended.reject);
      // the first event decompresses while the source still waits for the second
      await firstLine.promise;
      assert.deepEqual(lines, ['{"tick":1}']);
      release.resolve();
      await ended.promise;
      assert.deepEqual(lines, ['{"tick":1}', '{"tick":2}']);
    }
  });
});
