import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { CSS, fetchRaw, JS, staticApp, staticSite } from './static-fixture.ts';

/** Larger than what is read whole (64 KiB): streamed. */
const LARGE_CSS = `${'.a { color: red }\n'.repeat(8000)}`;

describe('app.serveStatic: precompressed siblings', () => {
  test('the best sibling the request takes, with Content-Encoding, the original type and Vary', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const decode = { br: brotliDecompressSync, zstd: zstdDecompressSync, gzip: gunzipSync } as const;
    const cases: [string, keyof typeof decode][] = [
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip, zstd', 'zstd'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['x-gzip', 'gzip'],
    ];
    for (const [accept, encoding] of cases) {
      const res = await fetchRaw(port, '/static/app.js', { headers: { 'accept-encoding': accept } });
      t.assert.strictEqual(res.status, 200, accept);
      t.assert.strictEqual(res.headers['content-encoding'], encoding, accept);
      t.assert.strictEqual(res.headers['content-type'], 'application/javascript; charset=utf-8');
      t.assert.strictEqual(res.headers['content-length'], String(res.body.length), 'the compressed length, sent as it is');
      t.assert.match(String(res.headers.vary), /Accept-Encoding/);
      t.assert.strictEqual(decode[encoding](res.body).toString(), JS);
    }
  });

  test('without Accept-Encoding (or refusing the codings): the file itself, still Vary: Accept-Encoding', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'br;q=0, gzip;q=0, zstd;q=0' }]) {
      const res = await fetchRaw(port, '/static/app.js', { headers });
      t.assert.strictEqual(res.headers['content-encoding'], undefined, JSON.stringify(headers));
      t.assert.strictEqual(res.text, JS);
      t.assert.match(String(res.headers.vary), /Accept-Encoding/);
    }
  });

  test('each sibling has its own ETag: a 304 for one encoding is not one for another', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const br = await fetchRaw(port, '/static/app.js', { headers: { 'accept-encoding': 'br' } });
    const gz = await fetchRaw(port, '/static/app.js', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.notStrictEqual(br.headers.etag, gz.headers.etag);
    const again = await fetchRaw(port, '/static/app.js', {
      headers: { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) },
    });
    t.assert.strictEqual(again.status, 304);
    t.assert.strictEqual(again.headers['content-encoding'], 'br');
    const other = await fetchRaw(port, '/static/app.js', {
      headers: { 'accept-encoding': 'gzip', 'if-none-match': String(br.headers.etag) },
    });
    t.assert.strictEqual(other.status, 200);
  });

  test("the App's compression never compresses a precompressed file again", async (t: TestContext) => {
    const { root } = staticSite(t);
    // zstd preferred by the App, gzip only on disk: the gzip sibling, as it is
    const { port } = await staticApp(t, root, '/static', {}, { compression: { enabled: true, encodings: ['zstd', 'gzip'] } });
    const res = await fetchRaw(port, '/static/docs/', { headers: { 'accept-encoding': 'zstd, gzip' } });
    t.assert.strictEqual(res.headers['content-encoding'], 'gzip');
    t.assert.strictEqual(gunzipSync(res.body).toString(), '<h1>docs</h1>');
  });

  test('a file without a sibling: compressed by the App when large enough, without Accept-Ranges', async (t: TestContext) => {
    const { root } = staticSite(t);
    writeFileSync(join(root, 'large.css'), LARGE_CSS);
    const { port } = await staticApp(t, root);
    // read whole (at most 64 KiB): compressed as a buffered reply, with the compressed length
    const css = await fetchRaw(port, '/static/site.css', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(css.headers['content-encoding'], 'gzip');
    t.assert.strictEqual(css.headers['content-length'], String(css.body.length));
    t.assert.strictEqual(css.headers['accept-ranges'], undefined, 'ranges count the bytes as they are');
    t.assert.strictEqual(gunzipSync(css.body).toString(), CSS);
    // streamed: compressed as it streams, without a Content-Length
    const large = await fetchRaw(port, '/static/large.css', { headers: { 'accept-encoding': 'br' } });
    t.assert.strictEqual(large.headers['content-encoding'], 'br');
    t.assert.strictEqual(large.headers['content-length'], undefined);
    t.assert.strictEqual(large.headers['accept-ranges'], undefined);
    t.assert.strictEqual(brotliDecompressSync(large.body).toString(), LARGE_CSS);
    // as it is to a client that takes no encoding, with its length
    const plainLarge = await fetchRaw(port, '/static/large.css');
    t.assert.strictEqual(plainLarge.headers['content-length'], String(LARGE_CSS.length));
    t.assert.strictEqual(plainLarge.headers['accept-ranges'], 'bytes');
    // under compression.thresholdBytes: as it is, with its length
    const tiny = await fetchRaw(port, '/static/tiny.txt', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(tiny.headers['content-encoding'], undefined);
    t.assert.strictEqual(tiny.headers['content-length'], '4');
    // compression off: never
    const off = await staticApp(t, root, '/static', {}, { compression: { enabled: false } });
    const plain = await fetchRaw(off.port, '/static/large.css', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(plain.headers['content-encoding'], undefined);
    t.assert.strictEqual(plain.text, LARGE_CSS);
  });

  test('precompressed: false or a list: only what it names is looked for', async (t: TestContext) => {
    const { root } = staticSite(t);
    const off = await staticApp(t, root, '/static', { precompressed: false }, { compression: { enabled: false } });
    const plain = await fetchRaw(off.port, '/static/app.js', { headers: { 'accept-encoding': 'br, gzip' } });
    t.assert.strictEqual(plain.headers['content-encoding'], undefined);
    t.assert.strictEqual(plain.headers.vary, undefined, 'no Vary: nothing is negotiated');
    const gzipOnly = await staticApp(t, root, '/static', { precompressed: ['gzip'] });
    const res = await fetchRaw(gzipOnly.port, '/static/app.js', { headers: { 'accept-encoding': 'br, gzip' } });
    t.assert.strictEqual(res.headers['content-encoding'], 'gzip');
  });

  test('a sibling alone (no file as it is): served to who takes it, a 404 to others', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const gz = await fetchRaw(port, '/static/only-gz.txt', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(gz.status, 200);
    t.assert.strictEqual(gunzipSync(gz.body).toString(), 'only gzip');
    t.assert.strictEqual(gz.headers['content-type'], 'text/plain; charset=utf-8');
    t.assert.strictEqual((await fetchRaw(port, '/static/only-gz.txt')).status, 404);
    // the compressed file by its own name: as it is, no Content-Encoding
    const named = await fetchRaw(port, '/static/app.js.gz', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(named.headers['content-encoding'], undefined);
    t.assert.strictEqual(gunzipSync(named.body).toString(), JS);
  });
});
