import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_CODES } from '../../errors/codes.ts';
import { createError, describeValue } from '../../errors/flotilla-error.ts';
import { KError } from '../../errors/k-error.ts';
import { markConnect } from '../../utils/connect-marker.ts';
import { isRecord } from '../../utils/is-record.ts';
import { STATUS_CODES } from '../../utils/node-http.ts';
import type { Ctx } from '../core/ctx.ts';
import type { Middleware } from '../core/route.ts';

/**
 * A connect (and Express) middleware: it reads `req`, writes `res`, and either ends the response
 * itself or calls `next()`, or `next(error)` to pass an error on. The request and the response are
 * Node's own (`ctx.req`, `ctx.res`): none of Express's additions to them exist.
 *
 * @example
 * const poweredBy: ConnectMiddleware = (req, res, next) => { res.setHeader('X-Powered-By', 'flotilla'); next(); };
 */
// a method's parameters are compared both ways: a middleware typed with Express's Request and Response
// (subtypes of Node's) is accepted as it is at run time
export type ConnectMiddleware = {
  middleware(req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): unknown;
}['middleware'];

/** Where a request is in a connect middleware: still in it, passed on (`next`), or answered by it. */
type Stage = 'running' | 'passed' | 'answered';

/**
 * Turns a connect/Express `(req, res, next)` middleware (helmet, cookie-parser, passport…) into a
 * flotilla {@link Middleware}, for a group's or a route's `middlewares`:
 * - `next()` goes on to the next middleware and the handler; what the middleware set with
 *   `res.setHeader` is part of flotilla's reply;
 * - `next(error)` (or a throw, or a rejected promise) reaches the error boundary as any thrown error:
 *   an error with a 4xx `status` or `statusCode` (http-errors, passport's `failWithError`) is that
 *   problem, its message the detail unless its `expose` is false; anything else is a 500;
 * - a response the middleware ends itself (`res.end`, a redirect, a 401 challenge) is the reply:
 *   flotilla writes nothing more, and the handler does not run.
 *
 * The middleware sees Node's `req` and `res`: what it adds to `req` (`req.user`, `req.cookies`) is
 * read from `ctx.req`. One that needs Express's own additions (`res.json`, `res.send`, `res.locals`,
 * `req.query` as Express parses it, `req.params`, `req.ip`, `req.get`) does not work; nor does a body
 * parser, since flotilla reads bodies itself (see docs/guides/connect-middleware.md).
 *
 * @example
 * import helmet from 'helmet';
 * import cookieParser from 'cookie-parser';
 * const web = app.group('/', fromConnect(helmet()), fromConnect(cookieParser(secret)));
 * web.registerController({ routes: () => [{ method: 'GET', path: '/me', handler: (ctx) => ({ session: (ctx.req as { signedCookies?: Record<string, string> }).signedCookies?.['sid'] }) }] });
 */
export function fromConnect(middleware: ConnectMiddleware): Middleware {
  if (typeof middleware !== 'function') throw createError('FLO_ERR_BAD_CONNECT_MIDDLEWARE', { got: describeValue(middleware) });
  if (middleware.length === 4) {
    const got = 'an error-handling middleware (err, req, res, next); map errors with app.setErrorHandler instead';
    throw createError('FLO_ERR_BAD_CONNECT_MIDDLEWARE', { got });
  }
  // the router reads the body of a route with one before its middlewares (`bodyBeforeMiddlewares`)
  return markConnect((ctx, next) => run(middleware, ctx as Ctx, next));
}

function run(middleware: ConnectMiddleware, ctx: Ctx, next: () => Promise<void>): Promise<void> {
  const res = ctx.res;
  shareBody(ctx);
  return new Promise<void>((resolve, reject) => {
    let stage: Stage = 'running';
    // the middleware ending the response: seen when it calls `res.end` (or when the connection closes)
    const own = Object.hasOwn(res, 'end');
    const end = res.end;
    const answered = () => {
      if (stage !== 'running') return;
      stage = 'answered';
      cleanup();
      resolve();
    };
    const watchedEnd = function (this: ServerResponse, ...args: unknown[]) {
      restoreEnd();
      const result = (end as (...a: unknown[]) => ServerResponse).apply(this, args);
      answered();
      return result;
    } as ServerResponse['end'];
    const restoreEnd = () => {
      if (res.end !== watchedEnd) return; // wrapped again since (compression and the like): theirs calls ours
      if (own) res.end = end;
      else delete (res as Partial<ServerResponse>).end;
    };
    const cleanup = () => {
      restoreEnd();
      res.off('close', answered);
    };
    const failed = (error: unknown) => {
      if (stage !== 'running') {
        // too late to answer with it: the request went on, or was answered
        ctx.logger.error({ err: error }, 'a connect middleware failed after it called next() or ended the response');
        return;
      }
      stage = 'passed';
      cleanup();
      reject(connectError(error));
    };
    const proceed = (error?: unknown) => {
      if (stage !== 'running') return; // after the response ended, or a second call: nothing left to do
      if (error !== undefined && error !== null) {
        failed(error);
        return;
      }
      stage = 'passed';
      cleanup();
      next().then(resolve, reject);
    };
    res.end = watchedEnd;
    res.once('close', answered);
    try {
      const result = middleware(ctx.req, res, proceed);
      // an async middleware (Express 5 style): its rejection is an error passed on
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') Promise.resolve(result).catch(failed);
    } catch (error) {
      failed(error);
    }
  });
}

/**
 * An error a connect middleware passed on, as the boundary should answer it: with the 4xx status it
 * carries (`status`, else `statusCode`), its message unless `expose` is false, its `headers`; a 5xx
 * status keeps its status but not its message; anything else is left as is (a 500).
 */
function connectError(error: unknown): unknown {
  if (error instanceof KError || !isErrorLike(error)) return error;
  const status = statusOf(error);
  if (status === undefined) return error;
  const phrase = STATUS_CODES[status] ?? 'Error';
  const exposed = status < 500 && error['expose'] !== false && typeof error['message'] === 'string' && error['message'] !== '';
  const options: { cause: unknown; headers?: Record<string, string> } = { cause: error };
  const headers = stringHeaders(error['headers']);
  if (headers !== undefined) options.headers = headers;
  return new KError(status, codeOf(status), exposed ? String(error['message']) : phrase, options);
}

function isErrorLike(error: unknown): error is Record<string, unknown> {
  return typeof error === 'object' && error !== null;
}

function statusOf(error: Record<string, unknown>): number | undefined {
  const status = error['status'] ?? error['statusCode'];
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

/** The first registered code of a status (`401` → `UNAUTHORIZED`), else `HTTP_<status>`. */
function codeOf(status: number): string {
  for (const [code, entry] of Object.entries(ERROR_CODES)) if (entry.status === status) return code;
  return `HTTP_${status}`;
}

function stringHeaders(headers: unknown): Record<string, string> | undefined {
  if (!isRecord(headers)) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') out[name] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Routes whose unread body a connect middleware asked for: warned once each. */
const warned = new Set<string>();

/**
 * `req.body`, as connect middlewares read it (passport-local, express-validator): the parsed body
 * when the route read it before its middlewares; when it did not and the request has one, a getter
 * that says so in the log, once per route, rather than a bare 400 from the middleware.
 */
function shareBody(ctx: Ctx): void {
  const req = ctx.req as IncomingMessage & { body?: unknown };
  if (Object.hasOwn(req, 'body')) return;
  if (ctx.body !== undefined) {
    req.body = ctx.body;
    return;
  }
  const hasBody =
    req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return;
  Object.defineProperty(req, 'body', {
    configurable: true,
    enumerable: true,
    get() {
      const route = `${ctx.method} ${ctx.route}`;
      if (!warned.has(route)) {
        warned.add(route);
        ctx.logger.warn(
          { route },
          'a connect middleware read req.body before the body was read: it saw undefined; set bodyBeforeMiddlewares: true on the route',
        );
      }
      return undefined;
    },
  });
}
