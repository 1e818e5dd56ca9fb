import { KError } from '../../errors/k-error.ts';
import { addVary } from '../compression/compression.ts';
import type { Ctx } from '../core/ctx.ts';
import type { NotFoundHandler, Route } from '../core/route.ts';
import { type FileOutcome, loadSend, sendFile } from './send-file.ts';
import { cacheControlOf, type StaticMount, type StaticOptions, staticMount } from './static-options.ts';
import { encodedPath, staticPath } from './static-path.ts';

/** What the static routes read of their App, per request. */
export interface StaticHost {
  /** The App's not-found handler (`setNotFoundHandler`), which answers a missing file as it answers a path no route matches. */
  readonly notFoundHandler: NotFoundHandler | undefined;
}

const MISSING: FileOutcome = { kind: 'missing' };

/**
 * The routes of `app.serveStatic(prefix, dir, options)`, hidden from the OpenAPI document:
 * `GET {prefix}/*` (HEAD with it), and `GET {prefix}`, which redirects to `{prefix}/` when there is
 * an index file to serve there. A path that is refused (static-path.ts), missing, or a link leaving
 * the directory is the 404 of a path no route matches; so is a malformed URL below the prefix (the
 * App registers the wildcard route as a mount: see `Router.find`).
 *
 * @example
 * for (const route of staticRoutes('/assets', 'dist/assets', {}, host)) router.add(route);
 */
export function staticRoutes(prefix: string, dir: string, options: StaticOptions | undefined, host: StaticHost): Route[] {
  const mount = staticMount(prefix, dir, options);
  loadSend();
  const routes: Route[] = [{ method: 'GET', path: `${mount.prefix}/*`, hide: true, handler: (ctx) => serveFiles(ctx, mount, host) }];
  // the mount's index answers at `{prefix}/`, where the page's relative links resolve below the prefix
  if (mount.prefix !== '' && mount.index !== undefined) {
    routes.push({ method: 'GET', path: mount.prefix, hide: true, handler: (ctx) => redirect(ctx, `${mount.prefix}/`) });
  }
  return routes;
}

async function serveFiles(ctx: Ctx, mount: StaticMount, host: StaticHost): Promise<unknown> {
  const path = staticPath(String(ctx.params['*'] ?? ''), mount.dotfiles);
  // refused, whatever the fallback: a traversal attempt gets nothing but the 404
  if (path === undefined) return notFound(ctx, host);
  let segments = path.segments;
  let outcome = MISSING;
  if (!path.directory) outcome = await sendFile(ctx.req, mount, segments);
  if (outcome.kind === 'directory' && mount.index !== undefined) return redirect(ctx, `${mount.prefix}${encodedPath(segments)}/`);
  if (path.directory && mount.index !== undefined) {
    segments = [...segments, mount.index];
    outcome = await sendFile(ctx.req, mount, segments);
  }
  if (outcome.kind === 'outside') return notFound(ctx, host);
  if (outcome.kind === 'missing' || outcome.kind === 'directory') {
    if (mount.spaFallback === undefined || !acceptsHtml(ctx)) return notFound(ctx, host);
    outcome = await sendFile(ctx.req, mount, mount.spaFallback);
    if (outcome.kind === 'missing' || outcome.kind === 'directory' || outcome.kind === 'outside') return notFound(ctx, host);
    // the one file stands for every client-side route: revalidated each time
    return answer(ctx, mount, outcome, mount.cacheControl ? 'no-cache' : undefined);
  }
  return answer(ctx, mount, outcome, cacheControlOf(mount, segments.join('/')));
}

function answer(ctx: Ctx, mount: StaticMount, outcome: FileOutcome, cacheControl: string | undefined): void {
  if (outcome.kind === 'unsatisfiable') {
    throw KError.of('RANGE_NOT_SATISFIABLE', 'the range asked for is malformed or outside the file', {
      headers: { 'Content-Range': outcome.contentRange },
    });
  }
  if (outcome.kind === 'precondition-failed') {
    throw KError.of('PRECONDITION_FAILED', 'the file does not meet the If-Match or If-Unmodified-Since condition');
  }
  if (outcome.kind !== 'file' && outcome.kind !== 'not-modified') return;
  // answered meanwhile (the handler timeout's 503), or nobody left to answer: the file is not sent
  if (ctx.res.headersSent || ctx.res.destroyed) {
    if (outcome.kind === 'file' && !Buffer.isBuffer(outcome.body)) outcome.body.destroy();
    return;
  }
  for (const [name, value] of Object.entries(outcome.headers)) ctx.setHeader(name, String(value));
  if (cacheControl !== undefined) ctx.setHeader('Cache-Control', cacheControl);
  if (outcome.encoding !== undefined) ctx.setHeader('Content-Encoding', outcome.encoding);
  if (mount.encodings.length > 0) addVary(ctx.res);
  if (outcome.kind === 'not-modified') ctx.status(304).send('', '');
  // whole or streamed, with its Content-Length; the App's compression leaves a 206 and a precompressed file alone
  else ctx.status(outcome.status).send(outcome.body, outcome.type);
}

/** A 301 to `location` (a path this mount built from checked segments), the query string kept. */
function redirect(ctx: Ctx, location: string): void {
  const url = ctx.req.url ?? '';
  const q = url.indexOf('?');
  ctx.status(301).setHeader('Location', q === -1 ? location : location + url.slice(q));
  ctx.send('', '');
}

/** The 404 of a path no route matches: the App's not-found handler's answer, or the `ROUTE_NOT_FOUND` problem. */
function notFound(ctx: Ctx, host: StaticHost): unknown {
  const handler = host.notFoundHandler;
  if (handler === undefined) throw KError.of('ROUTE_NOT_FOUND', `no route for ${ctx.method} ${ctx.path.slice(0, 200)}`);
  ctx.statusCode = 404;
  return handler(ctx);
}

/** A browser's navigation: `Accept` names `text/html`, not at q=0 (a script's or an image's request does not). */
function acceptsHtml(ctx: Ctx): boolean {
  const accept = ctx.headers.accept;
  if (typeof accept !== 'string') return false;
  for (const entry of accept.split(',')) {
    const [type = '', ...params] = entry.split(';');
    if (type.trim().toLowerCase() !== 'text/html') continue;
    return !params.some((param) => /^\s*q\s*=\s*0(?:\.0{0,3})?\s*$/i.test(param));
  }
  return false;
}
