import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { CSS, fetchRaw, staticApp, staticSite } from './static-fixture.ts';

describe('app.serveStatic: conditional requests', () => {
  test('If-None-Match with the ETag: 304 with the validators and Cache-Control, no body', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/static', { maxAgeS: 60 });
    const first = await fetchRaw(port, '/static/site.css');
    const etag = String(first.headers.etag);
    const again = await fetchRaw(port, '/static/site.css', { headers: { 'if-none-match': etag } });
    t.assert.strictEqual(again.status, 304);
    t.assert.strictEqual(again.body.length, 0);
    t.assert.strictEqual(again.headers.etag, etag);
    t.assert.strictEqual(again.headers['last-modified'], first.headers['last-modified']);
    t.assert.strictEqual(again.headers['cache-control'], 'public, max-age=60');
    t.assert.strictEqual(again.headers['content-type'], undefined);
    t.assert.strictEqual(again.headers['content-length'], undefined);
    t.assert.match(String(again.headers.vary), /Accept-Encoding/);
    // a list holding it, and the strong form of the weak tag, match as well
    t.assert.strictEqual((await fetchRaw(port, '/static/site.css', { headers: { 'if-none-match': `"x", ${etag}` } })).status, 304);
    t.assert.strictEqual((await fetchRaw(port, '/static/site.css', { headers: { 'if-none-match': etag.slice(2) } })).status, 304);
    // another tag: the file
    const stale = await fetchRaw(port, '/static/site.css', { headers: { 'if-none-match': 'W/"0-0"' } });
    t.assert.strictEqual(stale.status, 200);
    t.assert.strictEqual(stale.text, CSS);
  });

  test('If-Modified-Since: 304 until the file changes', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const first = await fetchRaw(port, '/static/site.css');
    const since = String(first.headers['last-modified']);
    t.assert.strictEqual((await fetchRaw(port, '/static/site.css', { headers: { 'if-modified-since': since } })).status, 304);
    const later = new Date(Date.parse(since) + 10_000);
    utimesSync(join(root, 'site.css'), later, later);
    const changed = await fetchRaw(port, '/static/site.css', { headers: { 'if-modified-since': since } });
    t.assert.strictEqual(changed.status, 200);
    t.assert.notStrictEqual(changed.headers.etag, first.headers.etag, 'the ETag follows the modification time');
  });

  test('If-Match that fails: the 412 problem', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const failed = await fetchRaw(port, '/static/site.css', { headers: { 'if-match': '"nope"' } });
    t.assert.strictEqual(failed.status, 412);
    t.assert.strictEqual(failed.headers['content-type'], 'application/problem+json');
    t.assert.strictEqual((JSON.parse(failed.text) as { code: string }).code, 'PRECONDITION_FAILED');
  });
});

describe('app.serveStatic: byte ranges', () => {
  test('one range: 206 with Content-Range and exactly those bytes', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=10-', 10, 255],
      ['bytes=-16', 240, 255],
      ['bytes=250-999', 250, 255],
    ];
    for (const [range, start, end] of cases) {
      const part = await fetchRaw(port, '/static/data.bin', { headers: { range } });
      t.assert.strictEqual(part.status, 206, range);
      t.assert.strictEqual(part.headers['content-range'], `bytes ${start}-${end}/256`);
      t.assert.strictEqual(part.headers['content-length'], String(end - start + 1));
      t.assert.deepStrictEqual(
        [...part.body],
        Array.from({ length: end - start + 1 }, (_, i) => start + i),
      );
    }
  });

  test('a range outside the file: the 416 problem with Content-Range: bytes */size, never a 5xx', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    for (const range of ['bytes=256-', 'bytes=1000-2000', 'bytes=300-299']) {
      const res = await fetchRaw(port, '/static/data.bin', { headers: { range } });
      t.assert.strictEqual(res.status, 416, range);
      t.assert.strictEqual(res.headers['content-range'], 'bytes */256');
      t.assert.strictEqual(res.headers['content-type'], 'application/problem+json');
      const problem = JSON.parse(res.text) as { code: string; status: number; instance: string };
      t.assert.strictEqual(problem.code, 'RANGE_NOT_SATISFIABLE');
      t.assert.strictEqual(problem.status, 416);
      t.assert.strictEqual(problem.instance, '/static/data.bin');
    }
  });

  test('several ranges, or another unit: the whole file; a malformed byte range: 416', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    for (const range of ['items=0-1', 'bytes=0-1,5-6']) {
      const res = await fetchRaw(port, '/static/data.bin', { headers: { range } });
      t.assert.strictEqual(res.status, 200, range);
      t.assert.strictEqual(res.body.length, 256);
    }
    for (const range of ['bytes=abc', 'bytes=', 'bytes=-']) {
      const res = await fetchRaw(port, '/static/data.bin', { headers: { range } });
      t.assert.strictEqual(res.status, 416, range);
      t.assert.strictEqual(res.headers['content-range'], 'bytes */256');
    }
  });

  test('If-Range with the current ETag: the range; with another: the whole file', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const etag = String((await fetchRaw(port, '/static/data.bin')).headers.etag);
    const fresh = await fetchRaw(port, '/static/data.bin', { headers: { range: 'bytes=0-0', 'if-range': etag } });
    t.assert.strictEqual(fresh.status, 206);
    const stale = await fetchRaw(port, '/static/data.bin', { headers: { range: 'bytes=0-0', 'if-range': '"old"' } });
    t.assert.strictEqual(stale.status, 200);
    t.assert.strictEqual(stale.body.length, 256);
  });

  test("a 206 is never compressed by the App's compression, a 200 of the same file is", async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const part = await fetchRaw(port, '/static/site.css', { headers: { range: 'bytes=0-99', 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(part.status, 206);
    t.assert.strictEqual(part.headers['content-encoding'], undefined);
    t.assert.strictEqual(part.text, CSS.slice(0, 100));
  });
});
