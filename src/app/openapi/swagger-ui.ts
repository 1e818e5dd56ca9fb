import type { Ctx } from '../core/ctx.ts';
import type { Route } from '../core/route.ts';
import { type Asset, etagOf, loadAsset, matchesEtag, SWAGGER_ASSETS } from './swagger-assets.ts';
import { DOCS_CSP, docsPage, SWAGGER_INITIALIZER } from './swagger-page.ts';

const INITIALIZER: Asset = {
  body: Buffer.from(SWAGGER_INITIALIZER),
  type: 'text/javascript; charset=utf-8',
  etag: etagOf(SWAGGER_INITIALIZER),
};

/**
 * The hidden routes of the documentation, served offline from
 * `swagger-ui-dist`:
 * - `GET {docsPath}`: the Swagger UI page (strict CSP, no inline script);
 *   `GET {docsPath}/` redirects to it;
 * - `GET {docsPath}/openapi.json`: `getDocument()` as JSON, called on every
 *   request (the caller caches), so routes added later appear;
 * - `GET {docsPath}/<asset>`: an allow-listed file of `swagger-ui-dist`, and
 *   the page's `swagger-initializer.js`.
 *
 * @example
 * for (const route of docsRoutes('/docs', () => app.openapi())) router.add(route);
 */
export function docsRoutes(docsPath: string, getDocument: () => unknown): Route[] {
  const path = docsPath.replaceAll(':', '::'); // find-my-way syntax: a literal colon
  const lastSegment = docsPath.slice(docsPath.lastIndexOf('/') + 1);
  // public, like the document they serve
  const route = (suffix: string, handler: NonNullable<Route['handler']>): Route => ({
    method: 'GET',
    path: `${path}${suffix}`,
    hide: true,
    security: [],
    handler,
  });
  return [
    route('', (ctx) => {
      const html = docsPage(docsPath, titleOf(getDocument()));
      securityHeaders(ctx).setHeader('Content-Security-Policy', DOCS_CSP).setHeader('Cache-Control', 'no-cache');
      ctx.send(html, 'text/html; charset=utf-8');
    }),
    route('/', (ctx) => {
      // relative, so the redirect also works under a proxy prefix
      ctx.status(301).setHeader('Location', `../${lastSegment}`);
      ctx.send('', '');
    }),
    route('/openapi.json', (ctx) => {
      securityHeaders(ctx).setHeader('Cache-Control', 'no-cache');
      ctx.ok(getDocument());
    }),
    route('/swagger-initializer.js', (ctx) => {
      sendAsset(ctx, INITIALIZER, 'no-cache');
    }),
    ...Object.keys(SWAGGER_ASSETS).map((name) =>
      route(`/${name}`, async (ctx) => {
        sendAsset(ctx, await loadAsset(name), 'public, max-age=86400');
      }),
    ),
  ];
}

function sendAsset(ctx: Ctx, asset: Asset, cacheControl: string): void {
  securityHeaders(ctx).setHeader('Cache-Control', cacheControl).setHeader('ETag', asset.etag);
  if (matchesEtag(headerOf(ctx, 'if-none-match'), asset.etag)) {
    ctx.status(304).send('', '');
    return;
  }
  ctx.send(asset.body, asset.type);
}

function securityHeaders(ctx: Ctx): Ctx {
  return ctx.setHeader('X-Content-Type-Options', 'nosniff').setHeader('Referrer-Policy', 'no-referrer');
}

function headerOf(ctx: Ctx, name: string): string | undefined {
  const value = ctx.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The page title: the document's `info.title`, when it has one. */
function titleOf(document: unknown): string {
  const info = (document as { info?: { title?: unknown } } | null)?.info;
  return typeof info?.title === 'string' ? info.title : 'API documentation';
}
