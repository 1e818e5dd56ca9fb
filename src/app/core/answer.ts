import { KError } from '../../errors/k-error.ts';
import { type ProblemResponse, toProblem } from '../../errors/problem.ts';
import { localizeProblem } from '../../i18n/localize-problem.ts';
import { compressSync, encodingOf } from '../compression/compression.ts';
import { recordException } from '../observability/tracing.ts';
import { UNMATCHED_ROUTE } from '../overload/in-flight.ts';
import { saveSession } from '../sessions/session-host.ts';
import { abortedByClient, ClientGoneError, clientGone } from './client-gone.ts';
import { type Ctx, isExpired, sessionOf } from './ctx.ts';
import type { PipelineHost, PipelineOverload } from './host.ts';
import { discardReply, mustClose, writeReply } from './reply.ts';

// A request's answer: its reply, or, for whatever was thrown on its way, its problem (see `fail`,
// the one place where errors become responses).

/** The pipeline's own 503s, accounted for without a `request failed` line: counted, and a timeout logged once. */
const accounted = new WeakSet<object>();

/** Marks one of the pipeline's own errors as accounted for (counted, logged if at all): `fail` logs no `request failed` line for it. */
export function accountedFor<E extends object>(error: E): E {
  accounted.add(error);
  return error;
}

/** The 503 of a request the admission control sheds, counted (a line each would flood the log under load). */
export function overloaded(overload: PipelineOverload): KError {
  const { shed, retryAfterS } = overload;
  shed?.inc({ reason: 'overload' });
  const error = KError.of('OVERLOADED', 'the server is overloaded: retry later', { headers: { 'Retry-After': String(retryAfterS) } });
  accounted.add(error);
  return error;
}

/** A request whose client left before its handler started: not run, answered with nothing (499 in its log line), counted. */
export function notRun(host: PipelineHost, ctx: Ctx): void {
  host.overload.shed?.inc({ reason: 'client-gone' });
  if (host.observability.logger.isLevelEnabled('debug')) ctx.logger.debug({ route: ctx.route }, 'client gone before the handler: not run');
}

/**
 * The route's work is done: its session saved first when it asked for one (a failed request saves
 * none of its changes), then the reply.
 */
export function answer(host: PipelineHost, ctx: Ctx): void {
  const session = sessionOf(ctx);
  if (session === undefined) {
    respond(host, ctx);
    return;
  }
  session
    .then(
      (loaded) => saveSession(host.scope.sessions, ctx, loaded),
      // the handler saw the store fail, and answered anyway: nothing to save
      () => undefined,
    )
    .then(
      () => {
        if (!isExpired(ctx)) respond(host, ctx);
      },
      (error: unknown) => {
        if (!isExpired(ctx)) fail(host, ctx, error);
      },
    );
}

export function respond(host: PipelineHost, ctx: Ctx): void {
  // a client gone: nobody to answer
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  // the handler may have set headers of its own since the arrival steps (a `Vary` CORS adds `Origin` to)
  beforeReply(host, ctx.res);
  try {
    writeReply(host.replies, ctx, (error) => logError(ctx, error, 'response stream failed'))?.catch((error: unknown) => {
      // timed out before the stream's first chunk: answered already
      if (isExpired(ctx)) return;
      // a client gone before the stream's first chunk: nobody to answer, and no failure of the server's
      if (ctx.res.destroyed || ctx.req.destroyed) ctx.res.destroy();
      else fail(host, ctx, error);
    });
  } catch (error) {
    fail(host, ctx, error);
  }
}

/** Requests whose error the App's error handler has seen: it runs at most once per request. */
const mapped = new WeakSet<Ctx>();

/**
 * The one place where errors become responses: the App's error handler maps
 * the error first (once per request), then `boundary` answers. Never throws,
 * whatever was thrown.
 */
export function fail(host: PipelineHost, ctx: Ctx, error: unknown): void {
  // the connection is a WebSocket's now (a middleware threw on its way out): nothing can be answered
  if (ctx.reply.kind === 'upgraded') {
    logError(ctx, error, 'request failed after its upgrade');
    return;
  }
  // a stream or an event source the handler chose will not be sent now: close it (a file, a cursor, a subscription)
  discardReply(ctx.reply);
  if (clientGone(ctx.res) && abortedByClient(error)) {
    // nobody to answer, and no failure of the server's: the request line says 499
    if (error instanceof ClientGoneError && error.beforeHandler) notRun(host, ctx);
    return;
  }
  const handler = host.seams.errorHandler;
  if (handler === undefined || mapped.has(ctx) || ctx.res.headersSent) {
    boundary(host, ctx, error);
    return;
  }
  mapped.add(ctx);
  // what the error handler chooses starts from a clean slate: no reply, status 500 unless it sets one
  ctx.reply = { kind: 'none' };
  ctx.statusCode = 500;
  // what it sends is an error response: the route's response schemas do not apply
  ctx.serializer = undefined;
  // a handler timeout while an asynchronous error handler runs answers instead: what it says later is dropped
  const expired = isExpired(ctx);
  const done = (value: unknown) => {
    if (isExpired(ctx) !== expired) return;
    if (ctx.reply.kind !== 'none') respond(host, ctx);
    else boundary(host, ctx, value === undefined ? error : value);
  };
  const broken = (thrown: unknown) => {
    if (isExpired(ctx) !== expired) return;
    ctx.reply = { kind: 'none' };
    boundary(host, ctx, new Error('the error handler threw', { cause: thrown }));
  };
  let value: unknown;
  try {
    value = handler(error, ctx);
  } catch (thrown) {
    broken(thrown);
    return;
  }
  if (typeof (value as PromiseLike<unknown> | undefined)?.then === 'function') Promise.resolve(value).then(done, broken);
  else done(value);
}

/** The default boundary: an error as an RFC 9457 problem, logged when it is the server's fault. */
function boundary(host: PipelineHost, ctx: Ctx, error: unknown, fallback = false): void {
  const problem = toProblem(error, {
    instance: ctx.path,
    requestId: ctx.requestId,
    traceId: ctx.traceId,
    production: host.replies.production,
  });
  if (problem.internal && !accounted.has(error as object)) logFailure(ctx, error);
  const res = ctx.res;
  const language = localize(host, ctx, problem);
  ctx.statusCode = problem.status;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  try {
    sendProblem(host, ctx, problem, language);
  } catch (unsendable) {
    // details JSON cannot hold (BigInt, cycles) or header values node:http refuses: answer a plain 500 instead
    if (fallback) res.destroy();
    else boundary(host, ctx, new Error('the error response could not be sent', { cause: unsendable }), true);
  }
}

/** Logs a 5xx's cause with its stack and records it on the span. */
function logFailure(ctx: Ctx, error: unknown): void {
  logError(ctx, error, 'request failed');
  try {
    recordException(ctx, error);
  } catch {
    // the span still ends with an ERROR status, only without the exception event
  }
}

/** Logs an error with the request's id and route; a value that throws when read (a Proxy, a throwing getter) is logged as such. */
export function logError(ctx: Ctx, error: unknown, message: string): void {
  const route = ctx.route || UNMATCHED_ROUTE;
  try {
    ctx.logger.error({ err: error, route }, message);
  } catch {
    ctx.logger.error({ err: new Error('the thrown value throws when it is read'), route }, message);
  }
}

/** Translates the problem into the request's locale; the locale, or undefined when nothing was translated or the translator failed. */
function localize(host: PipelineHost, ctx: Ctx, problem: ProblemResponse): string | undefined {
  const translator = host.scope.translator;
  if (translator === undefined) return undefined;
  try {
    const locale = ctx.locale;
    return locale !== undefined && localizeProblem(problem.body, translator, locale) ? locale : undefined;
  } catch (error) {
    logError(ctx, error, 'the translator failed: the problem is sent untranslated');
    return undefined;
  }
}

function sendProblem(host: PipelineHost, ctx: Ctx, problem: ProblemResponse, language: string | undefined): void {
  const res = ctx.res;
  let body: string | Buffer = JSON.stringify(problem.body);
  // the headers of the body that is not sent go; a Content-Security-Policy (helmet's) is no such header
  for (const name of res.getHeaderNames()) {
    if (name.startsWith('content-') && !name.startsWith('content-security-policy')) res.removeHeader(name);
  }
  if (language !== undefined) res.setHeader('Content-Language', language);
  if (problem.headers !== undefined) for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  beforeReply(host, res);
  const replies = host.replies;
  if (mustClose(replies, ctx.req)) res.setHeader('Connection', 'close');
  res.setHeader('Content-Type', 'application/problem+json');
  const c = replies.compression;
  // a problem is small: compressed on the spot when it passes the threshold at all
  const encoding =
    c === undefined ? undefined : encodingOf(c, ctx.req, res, problem.status, 'application/problem+json', Buffer.byteLength(body));
  if (encoding !== undefined) {
    body = compressSync(encoding, Buffer.from(body));
    res.setHeader('Content-Encoding', encoding);
  }
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.statusCode = problem.status;
  res.end(body);
}

/** The steps run on a reply's headers right before it is written (see `PipelineSteps.beforeReply`). */
function beforeReply(host: PipelineHost, res: Ctx['res']): void {
  const steps = host.steps.beforeReply;
  for (let i = 0; i < steps.length; i++) (steps[i] as (res: Ctx['res']) => void)(res);
}
