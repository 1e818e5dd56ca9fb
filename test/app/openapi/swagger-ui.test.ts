import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runInNewContext } from 'node:vm';
import SwaggerParser from '@apidevtools/swagger-parser';
import { App } from '../../../src/app/app.ts';
import { loadAsset, matchesEtag, SWAGGER_ASSETS, swaggerUiDistDir } from '../../../src/app/openapi/swagger-assets.ts';
import { DOCS_CSP, docsPage, SWAGGER_INITIALIZER } from '../../../src/app/openapi/swagger-page.ts';
import { docsRoutes } from '../../../src/app/openapi/swagger-ui.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { sink } from '../../helpers/sink.ts';

/** Every URL the page references (`href` and `src` attributes). */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1] ?? '');
}

/** Runs the initializer as a browser would, loaded from `scriptUrl`, and returns the config it gives Swagger UI. */
function initializerConfig(scriptUrl: string): Record<string, unknown> {
  let config: Record<string, unknown> | undefined;
  let onLoad: (() => void) | undefined;
  const SwaggerUIBundle = Object.assign(
    (c: Record<string, unknown>) => {
      config = c;
      return {};
    },
    { presets: { apis: 'apis-preset' }, plugins: { DownloadUrl: 'download-url-plugin' } },
  );
  const window = {
    addEventListener: (event: string, fn: () => void) => {
      if (event === 'load') onLoad = fn;
    },
  };
  runInNewContext(SWAGGER_INITIALIZER, { window, document: { currentScript: { src: scriptUrl } }, URL, SwaggerUIBundle });
  assert.ok(onLoad, 'the initializer waits for the load event');
  onLoad();
  assert.ok(config, 'SwaggerUIBundle was called');
  return config;
}

describe('docs page and initializer', () => {
  test('the page has no inline script and references only files next to it', () => {
    const html = docsPage('/docs', 'Books <API>');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 2);
    for (const [, attributes, content] of scripts) {
      assert.match(attributes ?? '', /\ssrc="\.\/docs\/[^"]+"/);
      assert.equal(content?.trim(), '');
    }
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
    const urls = referencedUrls(html);
    assert.ok(urls.length >= 4);
    for (const url of urls) assert.match(url, /^\.\/docs\/[a-z0-9.-]+$/, url);
    assert.match(html, /<title>Books &lt;API&gt;<\/title>/);
  });

  test('a nested docs path is referenced by its last segment, relative to the page', () => {
    const urls = referencedUrls(docsPage('/v1/api-docs', 'x'));
    for (const url of urls) assert.match(url, /^\.\/api-docs\//, url);
    for (const url of referencedUrls(docsPage('/a:b', 'x'))) assert.ok(url.startsWith('./a:b/'), 'never read as a URL scheme');
  });

  test('every file the page references is served by docsRoutes', () => {
    const served = new Set(docsRoutes('/docs', () => ({})).map((r) => r.path));
    for (const url of referencedUrls(docsPage('/docs', 'x'))) assert.ok(served.has(url.slice(1)), url);
  });

  test('the initializer loads openapi.json next to itself, with query config and the online validator off', () => {
    const config = initializerConfig('https://api.example.com/v1/docs/swagger-initializer.js');
    assert.equal(config['url'], 'https://api.example.com/v1/docs/openapi.json');
    assert.equal(config['queryConfigEnabled'], false);
    assert.equal(config['validatorUrl'], null);
    assert.equal(config['dom_id'], '#swagger-ui');
    assert.equal(config['configUrl'], undefined);
    assert.doesNotMatch(SWAGGER_INITIALIZER, /https?:/);
  });

  test('the CSP allows no inline script, no plugins, no framing', () => {
    assert.equal(
      DOCS_CSP,
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
  });
});

describe('docs assets', () => {
  test('every allow-listed file exists in swagger-ui-dist', () => {
    for (const name of Object.keys(SWAGGER_ASSETS)) assert.ok(existsSync(join(swaggerUiDistDir(), name)), name);
  });

  test('only allow-listed names are read, once', async () => {
    await assert.rejects(loadAsset('../package.json'), /not a docs asset/);
    await assert.rejects(loadAsset('index.html'), /not a docs asset/);
    await assert.rejects(loadAsset('toString'), /not a docs asset/);
    const first = await loadAsset('swagger-ui.css');
    assert.equal(first.type, 'text/css; charset=utf-8');
    assert.match(first.body.toString('utf8', 0, 200), /swagger-ui/);
    assert.equal((await loadAsset('swagger-ui.css')).body, first.body, 'cached');
  });

  test('ETags match the way If-None-Match compares them', () => {
    assert.ok(matchesEtag('"a"', '"a"'));
    assert.ok(matchesEtag('W/"x", W/"a"', '"a"'));
    assert.ok(matchesEtag('*', '"a"'));
    assert.ok(!matchesEtag('"b"', '"a"'));
    assert.ok(!matchesEtag(undefined, '"a"'));
  });

  test('docsRoutes are hidden GET routes; a colon in the docs path is literal', () => {
    const routes = docsRoutes('/api:docs', () => ({}));
    assert.ok(routes.every((r) => r.method === 'GET' && r.hide === true));
    assert.ok(routes.some((r) => r.path === '/api::docs'));
    assert.ok(routes.some((r) => r.path === '/api::docs/openapi.json'));
  });
});

describe('docs through the App', () => {
  const makeApp = (config: KConfig = {}) => new App({ port: 0, ...config }, { logStream: sink() });

  test('GET /docs serves the Swagger UI page with a strict CSP', async () => {
    const res = await makeApp().inject({ method: 'GET', url: '/docs' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['content-security-policy'], DOCS_CSP);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(res.body, /<div id="swagger-ui"><\/div>/);
    assert.match(res.body, /src="\.\/docs\/swagger-ui-bundle\.js"/);
  });

  test('?url= and ?configUrl= do not change the page', async () => {
    const app = makeApp();
    const plain = await app.inject({ method: 'GET', url: '/docs' });
    const evil = await app.inject({ method: 'GET', url: '/docs?url=https://evil.example/x.json&configUrl=https://evil.example/c.json' });
    assert.equal(evil.statusCode, 200);
    assert.equal(evil.body, plain.body);
    assert.doesNotMatch(evil.body, /evil/);
  });

  test('GET /docs/ redirects to the page', async () => {
    const res = await makeApp().inject({ method: 'GET', url: '/docs/' });
    assert.equal(res.statusCode, 301);
    assert.equal(new URL(res.headers['location'] as string, 'http://h/docs/').pathname, '/docs');
  });

  test('every asset is served with its content type, cached, and revalidated by ETag', async () => {
    const app = makeApp();
    const expected: Record<string, string> = { ...SWAGGER_ASSETS, 'swagger-initializer.js': 'text/javascript; charset=utf-8' };
    for (const [name, type] of Object.entries(expected)) {
      const res = await app.inject({ method: 'GET', url: `/docs/${name}` });
      assert.equal(res.statusCode, 200, name);
      assert.equal(res.headers['content-type'], type, name);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', name);
      assert.ok(res.rawPayload.length > 0, name);
      const etag = res.headers['etag'] as string;
      assert.match(etag, /^"[\w-]+"$/, name);
      const again = await app.inject({ method: 'GET', url: `/docs/${name}`, headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304, name);
      assert.equal(again.rawPayload.length, 0, name);
    }
    const css = await app.inject({ method: 'GET', url: '/docs/swagger-ui.css' });
    assert.equal(css.headers['cache-control'], 'public, max-age=86400');
  });

  test('files outside the allow-list are 404', async () => {
    const app = makeApp();
    for (const url of [
      '/docs/index.html',
      '/docs/package.json',
      '/docs/..%2Fpackage.json',
      '/docs/swagger-ui.js',
      '/docs/oauth2-redirect.html',
    ]) {
      assert.equal((await app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  });

  test('GET /docs/openapi.json is a valid document that includes routes registered later', async () => {
    const app = makeApp({ serviceName: 'books' });
    app.registerController({ routes: () => [{ method: 'GET', path: '/early', handler: () => 'early' }] });
    const before = await app.inject({ method: 'GET', url: '/docs/openapi.json' });
    assert.equal(before.statusCode, 200);
    assert.match(before.headers['content-type'] as string, /^application\/json/);
    assert.ok(before.json().paths['/early']);

    app.registerController({ routes: () => [{ method: 'GET', path: '/books/:id', handler: () => ({}) }] });
    const res = await app.inject({ method: 'GET', url: '/docs/openapi.json' });
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'books');
    assert.ok(doc.paths['/books/{id}']?.get, 'a route registered after the first request appears');
    assert.equal(doc.paths['/docs'], undefined, 'the docs routes are hidden');
    await SwaggerParser.validate(doc);
  });

  test("env: 'production' has no docs routes", async () => {
    const app = makeApp({ env: 'production' });
    for (const url of ['/docs', '/docs/openapi.json', '/docs/swagger-ui.css', '/docs/swagger-initializer.js']) {
      assert.equal((await app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  });

  test('a custom docs.path moves every docs route', async () => {
    const app = makeApp({ docs: { path: '/api-docs' } });
    const page = await app.inject({ method: 'GET', url: '/api-docs' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /src="\.\/api-docs\/swagger-initializer\.js"/);
    assert.equal((await app.inject({ method: 'GET', url: '/api-docs/openapi.json' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api-docs/swagger-ui-bundle.js' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/docs' })).statusCode, 404);

    const nested = makeApp({ docs: { path: '/v1/reference' } });
    const nestedPage = await nested.inject({ method: 'GET', url: '/v1/reference' });
    for (const url of referencedUrls(nestedPage.body)) {
      const absolute = new URL(url, 'http://h/v1/reference').pathname;
      assert.equal((await nested.inject({ method: 'GET', url: absolute })).statusCode, 200, absolute);
    }
  });
});
