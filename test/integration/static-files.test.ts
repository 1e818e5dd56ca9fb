import { connect } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { fetchRaw, JS, SECRET, staticSite } from '../app/static/static-fixture.ts';
import { startCluster } from '../helpers/cluster.ts';

const SERVICE = fileURLToPath(new URL('../fixtures/static/service.ts', import.meta.url));

/** Sends `target` as the request-target, byte for byte (no client normalizes it), and reads the whole answer. */
function rawGet(port: number, target: string | Buffer, accept = 'text/html'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      const head = ` HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${accept}\r\nAccept-Encoding: br, zstd, gzip\r\nConnection: close\r\n\r\n`;
      socket.write(Buffer.concat([Buffer.from('GET '), Buffer.from(target), Buffer.from(head)]));
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
  });
}

/**
 * Paths that try to leave the served directory (its parent holds `secret.txt`, and `root-evil/`, a
 * sibling whose name starts like the root's), each written as clients never would: encoded
 * separators and dots, double encoding, backslashes, NUL, absolute paths, overlong UTF-8, links.
 */
const TRAVERSALS = [
  '../secret.txt',
  '../../secret.txt',
  '..%2fsecret.txt',
  '..%2Fsecret.txt',
  '%2e%2e/secret.txt',
  '%2E%2e/secret.txt',
  '%2e%2E%2fsecret.txt',
  '.%2e/secret.txt',
  '%2e./secret.txt',
  'docs/..%2f..%2fsecret.txt',
  'docs/%2e%2e/%2e%2e/secret.txt',
  './../secret.txt',
  '..%5csecret.txt',
  '..%5Csecret.txt',
  '..\\secret.txt',
  '..\\..\\secret.txt',
  'docs\\..\\..\\secret.txt',
  '%252e%252e/secret.txt',
  '%252e%252e/name.txt',
  '%25252e%25252e/secret.txt',
  '%252e%252e%252fsecret.txt',
  '..%252fsecret.txt',
  '%25%32%65%25%32%65/secret.txt',
  'secret.txt%00.html',
  'index.html%00',
  '%00/../secret.txt',
  '..%00/secret.txt',
  '/etc/passwd',
  '%2fetc%2fpasswd',
  '%2Fetc%2Fpasswd',
  '/../secret.txt',
  'C:%5cWindows%5cwin.ini',
  '%c0%ae%c0%ae/secret.txt',
  '%C0%AE%C0%AE/secret.txt',
  '%c0%ae%c0%ae%c0%afsecret.txt',
  '..%c0%afsecret.txt',
  '..%c1%9csecret.txt',
  '%e0%80%ae%e0%80%ae/secret.txt',
  '%f0%80%80%ae%f0%80%80%ae/secret.txt',
  '%uff0e%uff0e/secret.txt',
  '%u002e%u002e/secret.txt',
  '%ef%bc%8e%ef%bc%8e/secret.txt',
  '%ef%bc%8e%ef%bc%8e%ef%bc%8fsecret.txt',
  '....//secret.txt',
  '.../secret.txt',
  'leak.txt',
  'up/secret.txt',
  'up/root-evil/x.txt',
  'evil/x.txt',
  '.env',
  '%2eenv',
  'leak.js',
];

function leaks(text: string): boolean {
  return text.includes(SECRET);
}

describe('static files in a cluster, through real sockets', () => {
  test('the traversal corpus: every path is a 404 on both mounts, and the secret never leaves', {
    timeout: 90_000,
  }, async (t: TestContext) => {
    const { root } = staticSite(t);
    const cluster = await startCluster(t, { config: { service: SERVICE }, env: { STATIC_ROOT: root } }).ready(2, 30_000);
    const port = cluster.appPort;
    // the setup ran in the primary's service thread too, where serveStatic does nothing (and must not throw)
    await cluster.waitFor((line) => String(line.msg).includes('its thread ends'), 'the service thread ran the setup and ended');
    // the mounts serve, so a 404 below is a refusal, not a dead mount
    t.assert.strictEqual((await rawGet(port, '/s/site.css')).status, 200);
    t.assert.match((await rawGet(port, '/client/route')).text, /<h1>home<\/h1>/, 'the fallback answers a browser');
    const failures: string[] = [];
    for (const prefix of ['/s/', '/']) {
      for (const path of TRAVERSALS) {
        for (const accept of ['text/html', '*/*']) {
          const { status, text } = await rawGet(port, `${prefix}${path}`, accept);
          if (status !== 404 || leaks(text) || text.includes('<h1>home</h1>')) failures.push(`${prefix}${path} (${accept}): ${status}`);
        }
      }
    }
    // absolute-form request targets, and a path starting with two slashes
    for (const target of ['http://127.0.0.1/s/../secret.txt', 'http://127.0.0.1/s/..%2fsecret.txt', '//etc/passwd', '//s/../secret.txt']) {
      const { status, text } = await rawGet(port, target);
      if (status !== 404 || leaks(text)) failures.push(`${target}: ${status}`);
    }
    t.assert.deepStrictEqual(failures, []);
    // bytes the HTTP parser itself refuses (raw overlong UTF-8, raw control characters): a 400 before any route
    for (const target of [
      Buffer.from([0x2f, 0x73, 0x2f, 0xc0, 0xae, 0xc0, 0xae, 0x2f]),
      Buffer.from('/s/a\x01b'),
      Buffer.from('/s/\x7f'),
    ]) {
      const { status, text } = await rawGet(port, target);
      t.assert.strictEqual(status, 400, JSON.stringify(target.toString('latin1')));
      t.assert.ok(!leaks(text));
    }
    t.assert.strictEqual((await fetchRaw(port, '/health')).status, 200, 'the cluster is still healthy');
    t.assert.deepStrictEqual(
      cluster.lines.filter((line) => Number(line.level) >= 50).map((line) => line.msg),
      [],
      'nothing was logged as an error, in the workers or the primary',
    );
  });

  test('the features through the cluster: 304, 206, 416, a precompressed sibling, immutable, HEAD', {
    timeout: 60_000,
  }, async (t: TestContext) => {
    const { root } = staticSite(t);
    const cluster = await startCluster(t, { config: { service: SERVICE }, env: { STATIC_ROOT: root } }).ready(2, 30_000);
    const port = cluster.appPort;
    const first = await fetchRaw(port, '/s/app.js');
    t.assert.strictEqual(first.text, JS);
    const etag = String(first.headers.etag);
    t.assert.strictEqual((await fetchRaw(port, '/s/app.js', { headers: { 'if-none-match': etag } })).status, 304);
    const since = String(first.headers['last-modified']);
    t.assert.strictEqual((await fetchRaw(port, '/s/app.js', { headers: { 'if-modified-since': since } })).status, 304);
    const part = await fetchRaw(port, '/s/data.bin', { headers: { range: 'bytes=16-31' } });
    t.assert.strictEqual(part.status, 206);
    t.assert.strictEqual(part.headers['content-range'], 'bytes 16-31/256');
    t.assert.deepStrictEqual(
      [...part.body],
      Array.from({ length: 16 }, (_, i) => 16 + i),
    );
    const outside = await fetchRaw(port, '/s/data.bin', { headers: { range: 'bytes=999-' } });
    t.assert.strictEqual(outside.status, 416);
    t.assert.strictEqual(outside.headers['content-range'], 'bytes */256');
    const gz = await fetchRaw(port, '/s/app.js', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(gz.headers['content-encoding'], 'gzip');
    t.assert.strictEqual(gunzipSync(gz.body).toString(), JS);
    t.assert.match(String(gz.headers.vary), /Accept-Encoding/);
    t.assert.strictEqual((await fetchRaw(port, '/s/app.3f9a1c2e.js')).headers['cache-control'], 'public, max-age=31536000, immutable');
    const head = await fetchRaw(port, '/s/app.js', { method: 'HEAD' });
    t.assert.strictEqual(head.headers['content-length'], String(Buffer.byteLength(JS)));
    t.assert.strictEqual(head.body.length, 0);
  });
});
