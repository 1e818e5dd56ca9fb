/**
 * The Content-Security-Policy of the docs page: everything from this origin,
 * no inline script, no plugins, not framable. Swagger UI needs inline styles
 * and `data:` images.
 *
 * @example
 * ctx.setHeader('Content-Security-Policy', DOCS_CSP);
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The HTML of the docs page served at `docsPath`. It has no inline script and
 * references its assets relative to the page (`./docs/swagger-ui.css` for
 * `/docs`, `./api-docs/…` for `/v1/api-docs`), so it also works behind a proxy
 * that mounts the service under a prefix.
 *
 * @example
 * docsPage('/docs', 'Books API'); // '<!DOCTYPE html>…<script src="./docs/swagger-ui-bundle.js"…'
 */
export function docsPage(docsPath: string, title: string): string {
  const base = escapeHtml(`./${docsPath.slice(docsPath.lastIndexOf('/') + 1)}`);
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${base}/swagger-ui.css">
    <link rel="stylesheet" href="${base}/index.css">
    <link rel="icon" type="image/png" href="${base}/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${base}/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${base}/swagger-ui-bundle.js" charset="utf-8"></script>
    <script src="${base}/swagger-initializer.js" charset="utf-8"></script>
  </body>
</html>
`;
}

/**
 * The script that starts Swagger UI on the document served next to it
 * (`openapi.json` resolved against the script's own URL). Query configuration
 * is off, so `?url=` and `?configUrl=` cannot point the page at another
 * document; the online validator is off, so nothing leaves the origin.
 *
 * @example
 * // served as `${docsPath}/swagger-initializer.js`
 * SWAGGER_INITIALIZER.includes('queryConfigEnabled: false'); // true
 */
export const SWAGGER_INITIALIZER = `'use strict';
(function () {
  var specUrl = new URL('openapi.json', document.currentScript.src).href;
  window.addEventListener('load', function () {
    window.ui = SwaggerUIBundle({
      url: specUrl,
      dom_id: '#swagger-ui',
      deepLinking: true,
      queryConfigEnabled: false,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis],
      plugins: [SwaggerUIBundle.plugins.DownloadUrl],
      layout: 'BaseLayout',
    });
  });
})();
`;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
