import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { CSS, fetchRaw, SECRET, staticApp, staticSite } from './static-fixture.ts';

describe('app.serveStatic: files, directories and what is not there', () => {
  test('a file: its bytes, type, length, validators and the default Cache-Control', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const css = await fetchRaw(port, '/static/site.css');
    t.assert.strictEqual(css.status, 200);
    t.assert.strictEqual(css.text, CSS);
    t.assert.strictEqual(css.headers['content-type'], 'text/css; charset=utf-8');
    t.assert.strictEqual(css.headers['content-length'], String(Buffer.byteLength(CSS)));
    t.assert.match(String(css.headers.etag), /^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    t.assert.ok(!Number.isNaN(Date.parse(String(css.headers['last-modified']))));
    t.assert.strictEqual(css.headers['accept-ranges'], 'bytes');
    t.assert.strictEqual(css.headers['cache-control'], 'public, max-age=0');
    t.assert.strictEqual(css.headers['x-content-type-options'], 'nosniff', "the App's security headers are there too");
    const bin = await fetchRaw(port, '/static/data.bin');
    t.assert.strictEqual(bin.headers['content-type'], 'application/octet-stream');
    t.assert.deepStrictEqual(
      [...bin.body],
      Array.from({ length: 256 }, (_, i) => i),
    );
    t.assert.strictEqual((await fetchRaw(port, '/static/noext')).headers['content-type'], 'application/octet-stream');
    t.assert.strictEqual((await fetchRaw(port, `/static/${encodeURIComponent('a b')}/${encodeURIComponent('ünï ☃.txt')}`)).text, 'unicode');
  });

  test('HEAD: the same head, no body', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const head = await fetchRaw(port, '/static/site.css', { method: 'HEAD' });
    t.assert.strictEqual(head.status, 200);
    t.assert.strictEqual(head.headers['content-length'], String(Buffer.byteLength(CSS)));
    t.assert.strictEqual(head.headers['content-type'], 'text/css; charset=utf-8');
    t.assert.strictEqual(head.body.length, 0);
  });

  test('other methods: the 404 of a path no route matches, not a 405 (a mount at / must not turn API typos into 405s)', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { app, port } = await staticApp(t, root, '/');
    app.registerController({ routes: () => [{ method: 'POST', path: '/api/books', handler: () => ({ ok: true }) }] });
    for (const [method, path] of [
      ['POST', '/site.css'],
      ['DELETE', '/missing'],
      ['POST', '/api/bookz'],
    ]) {
      const res = await fetchRaw(port, path as string, { method: method as string });
      t.assert.strictEqual(res.status, 404, `${method} ${path}`);
      t.assert.strictEqual((JSON.parse(res.text) as { code: string }).code, 'ROUTE_NOT_FOUND');
    }
    // a route of the App keeps its 405, whose Allow names the App's routes only
    const put = await fetchRaw(port, '/api/books', { method: 'PUT' });
    t.assert.strictEqual(put.status, 405);
    t.assert.strictEqual(put.headers.allow, 'POST');
  });

  test('index.html for a directory; a directory without its slash redirects to it, the query kept', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    t.assert.strictEqual((await fetchRaw(port, '/static/')).text, '<h1>home</h1>');
    t.assert.strictEqual((await fetchRaw(port, '/static/docs/')).text, '<h1>docs</h1>');
    const mount = await fetchRaw(port, '/static?v=2');
    t.assert.strictEqual(mount.status, 301);
    t.assert.strictEqual(mount.headers.location, '/static/?v=2');
    const docs = await fetchRaw(port, '/static/docs');
    t.assert.strictEqual(docs.status, 301);
    t.assert.strictEqual(docs.headers.location, '/static/docs/');
    const noIndex = await fetchRaw(port, '/static/empty/');
    t.assert.strictEqual(noIndex.status, 404);
  });

  test('index: false: a directory is a 404, and the mount path is not routed', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/static', { index: false });
    for (const path of ['/static/', '/static/docs/', '/static/docs', '/static']) {
      t.assert.strictEqual((await fetchRaw(port, path)).status, 404, path);
    }
    t.assert.strictEqual((await fetchRaw(port, '/static/docs/index.html')).status, 200);
  });

  test('a missing file is the 404 problem of a path no route matches', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    const missing = await fetchRaw(port, '/static/missing.css');
    const unrouted = await fetchRaw(port, '/elsewhere/missing.css');
    t.assert.strictEqual(missing.status, 404);
    t.assert.strictEqual(missing.headers['content-type'], 'application/problem+json');
    const body = JSON.parse(missing.text) as Record<string, unknown>;
    const other = JSON.parse(unrouted.text) as Record<string, unknown>;
    t.assert.deepStrictEqual(Object.keys(body).sort(), Object.keys(other).sort());
    t.assert.strictEqual(body.code, 'ROUTE_NOT_FOUND');
    t.assert.strictEqual(body.detail, 'no route for GET /static/missing.css');
    t.assert.strictEqual(body.instance, '/static/missing.css');
    t.assert.strictEqual(body.type, other.type);
  });

  test("the App's not-found handler answers a missing file as it answers an unknown path", async (t: TestContext) => {
    const { root } = staticSite(t);
    const { app, port } = await staticApp(t, root);
    app.setNotFoundHandler((ctx) => ({ nothing: ctx.path }));
    const missing = await fetchRaw(port, '/static/missing.css');
    t.assert.strictEqual(missing.status, 404);
    t.assert.deepStrictEqual(JSON.parse(missing.text), { nothing: '/static/missing.css' });
    const refused = await fetchRaw(port, '/static/..%2fsecret.txt');
    t.assert.strictEqual(refused.status, 404);
    t.assert.ok(!refused.text.includes(SECRET));
  });

  test('dotfiles: 404 by default; served with dotfiles: allow', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    for (const path of ['/static/.env', '/static/.well-known/security.txt', '/static/empty/.keep']) {
      const res = await fetchRaw(port, path);
      t.assert.strictEqual(res.status, 404, path);
      t.assert.ok(!res.text.includes(SECRET));
    }
    const open = await staticApp(t, root, '/open', { dotfiles: 'allow' });
    t.assert.strictEqual((await fetchRaw(open.port, '/open/.well-known/security.txt')).status, 200);
  });

  test('a symbolic link inside the directory is served; one whose target is outside is a 404', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    t.assert.strictEqual((await fetchRaw(port, '/static/alias.css')).text, CSS);
    // a link that leaves and comes back lands inside: what counts is where the file really is
    t.assert.strictEqual((await fetchRaw(port, '/static/up/root/site.css')).text, CSS);
    for (const path of ['/static/leak.txt', '/static/up/secret.txt', '/static/evil/x.txt']) {
      const res = await fetchRaw(port, path);
      t.assert.strictEqual(res.status, 404, path);
      t.assert.ok(!res.text.includes(SECRET), path);
    }
    // a precompressed sibling that leads outside refuses the path
    const sibling = await fetchRaw(port, '/static/leak.js', { headers: { 'accept-encoding': 'gzip' } });
    t.assert.strictEqual(sibling.status, 404);
    t.assert.ok(!sibling.text.includes(SECRET));
  });

  test('a dot segment encoded twice is refused, even where a directory has that literal name', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root);
    t.assert.strictEqual((await fetchRaw(port, '/static/%252e%252e/name.txt')).status, 404);
    t.assert.strictEqual((await fetchRaw(port, '/static/100%25.txt')).text, 'a literal percent sign');
  });

  test('the routes are left out of the OpenAPI document', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { app } = await staticApp(t, root);
    t.assert.deepStrictEqual(
      Object.keys(app.openapi().paths ?? {}).filter((p) => p.startsWith('/static')),
      [],
    );
  });
});

describe('app.serveStatic: Cache-Control', () => {
  test('maxAgeS, immutable for hashed names, and none with cacheControl: false', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/static', { maxAgeS: 3600, immutable: /\.[0-9a-f]{8}\.\w+$/ });
    t.assert.strictEqual((await fetchRaw(port, '/static/site.css')).headers['cache-control'], 'public, max-age=3600');
    t.assert.strictEqual((await fetchRaw(port, '/static/app.3f9a1c2e.js')).headers['cache-control'], 'public, max-age=31536000, immutable');
    const none = await staticApp(t, root, '/none', { cacheControl: false });
    t.assert.strictEqual((await fetchRaw(none.port, '/none/site.css')).headers['cache-control'], undefined);
  });
});

describe('app.serveStatic: the single-page-app fallback', () => {
  test('a path that names no file, from a browser (Accept: text/html), gets the fallback, no-cache', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/', { spaFallback: 'shell.html', maxAgeS: 600 });
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const path of ['/settings/profile', '/books/42', '/missing.css']) {
      const page = await fetchRaw(port, path, { headers: html });
      t.assert.strictEqual(page.status, 200, path);
      t.assert.strictEqual(page.text, '<h1>shell</h1>');
      t.assert.strictEqual(page.headers['cache-control'], 'no-cache');
      t.assert.strictEqual(page.headers['content-type'], 'text/html; charset=utf-8');
    }
    // the files themselves, as they are
    t.assert.strictEqual((await fetchRaw(port, '/site.css', { headers: html })).text, CSS);
    t.assert.strictEqual((await fetchRaw(port, '/', { headers: html })).text, '<h1>home</h1>');
  });

  test('a script, an image or an API client asking for what is not there still gets the 404', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/', { spaFallback: 'shell.html' });
    for (const accept of [undefined, '*/*', 'application/json', 'image/avif,image/webp,*/*', 'text/html;q=0']) {
      const res = await fetchRaw(port, '/missing.js', { headers: accept === undefined ? {} : { accept } });
      t.assert.strictEqual(res.status, 404, String(accept));
    }
  });

  test('a refused path never gets the fallback', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/', { spaFallback: 'shell.html' });
    for (const path of ['/..%2fsecret.txt', '/.env', '/leak.txt', '/a%5cb']) {
      const res = await fetchRaw(port, path, { headers: { accept: 'text/html' } });
      t.assert.strictEqual(res.status, 404, path);
      t.assert.ok(!res.text.includes(SECRET));
      t.assert.ok(!res.text.includes('shell'));
    }
  });

  test('beside a root mount, the routes of the App answer as before', async (t: TestContext) => {
    const { root } = staticSite(t);
    const { port } = await staticApp(t, root, '/', { spaFallback: 'shell.html' });
    t.assert.strictEqual((await fetchRaw(port, '/health')).status, 200);
    t.assert.strictEqual((await fetchRaw(port, '/docs/openapi.json')).status, 200);
  });
});

describe('app.serveStatic: files the worker cannot read', () => {
  test('what is no regular file (a FIFO, which would block a reader) is a 404', async (t: TestContext) => {
    const { root } = staticSite(t);
    execFileSync('mkfifo', [join(root, 'pipe.txt')]);
    const { port } = await staticApp(t, root);
    t.assert.strictEqual((await fetchRaw(port, '/static/pipe.txt')).status, 404);
    t.assert.strictEqual((await fetchRaw(port, '/static/site.css')).status, 200, 'and the worker still serves');
  });

  test('an unreadable file is a 404, not a 500', {
    skip: process.getuid?.() === 0 ? 'root reads every file' : false,
  }, async (t: TestContext) => {
    const { root } = staticSite(t);
    chmodSync(join(root, 'tiny.txt'), 0o000);
    const { port } = await staticApp(t, root);
    const res = await fetchRaw(port, '/static/tiny.txt');
    t.assert.strictEqual(res.status, 404);
  });
});
