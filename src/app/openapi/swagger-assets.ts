import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The only files of `swagger-ui-dist` the docs serve, with their content
 * types. Names come from this list, never from the request, so no path can
 * escape the package.
 *
 * @example
 * SWAGGER_ASSETS['swagger-ui.css']; // 'text/css; charset=utf-8'
 */
export const SWAGGER_ASSETS: Readonly<Record<string, string>> = Object.freeze({
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui.css.map': 'application/json; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-bundle.js.map': 'application/json; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'favicon-16x16.png': 'image/png',
  'favicon-32x32.png': 'image/png',
});

/**
 * A file ready to send: its bytes, content type and a strong ETag.
 *
 * @example
 * const { body, type, etag } = await loadAsset('favicon-32x32.png');
 */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

let distDir: string | undefined;

/**
 * The directory of the installed `swagger-ui-dist` package.
 *
 * @example
 * join(swaggerUiDistDir(), 'swagger-ui.css');
 */
export function swaggerUiDistDir(): string {
  distDir ??= dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return distDir;
}

const cache = new Map<string, Promise<Asset>>();

/**
 * Reads an allow-listed asset once (lazily) and keeps it in memory; a failed
 * read is not cached, so the next request tries again.
 *
 * @example
 * const css = await loadAsset('swagger-ui.css'); // css.type === 'text/css; charset=utf-8'
 */
export function loadAsset(name: string): Promise<Asset> {
  const type = Object.hasOwn(SWAGGER_ASSETS, name) ? SWAGGER_ASSETS[name] : undefined;
  if (type === undefined) return Promise.reject(new Error(`'${name}' is not a docs asset`));
  let pending = cache.get(name);
  if (pending === undefined) {
    pending = readFile(join(swaggerUiDistDir(), name)).then((body) => ({ body, type, etag: etagOf(body) }));
    pending.catch(() => cache.delete(name));
    cache.set(name, pending);
  }
  return pending;
}

/**
 * A strong ETag of some content.
 *
 * @example
 * etagOf('hello'); // '"qvTGHdzF6KLavt4PO0gs2a6pQ00"'
 */
export function etagOf(content: string | Buffer): string {
  return `"${createHash('sha1').update(content).digest('base64url')}"`;
}

/**
 * Whether an `If-None-Match` request header matches an ETag (weak comparison, RFC 9110 §13.1.2).
 *
 * @example
 * matchesEtag('W/"abc", "def"', '"abc"'); // true
 */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const bare = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === bare;
  });
}
