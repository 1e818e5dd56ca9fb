import type { IncomingMessage } from 'node:http';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { KError } from '../../errors/k-error.ts';
import { type ProblemResponse, toProblem } from '../../errors/problem.ts';
import { localizeProblem } from '../../i18n/localize-problem.ts';
import type { MetricsCollector } from '../../metrics/metrics-collector.ts';
import type { WireMetrics } from '../../metrics/protocol-metrics.ts';
import { runInScope } from '../../utils/context-storage.ts';
import { otel } from '../../utils/otel-api.ts';
import { compressSync, encodingOf } from '../compression/compression.ts';
import type { Cors } from '../headers/cors.ts';
import { type CrossOriginCheck, isUnsafe, isUpgradeRequest } from '../headers/cross-origin.ts';
import { type HeaderPair, setSecurityHeaders } from '../headers/security-headers.ts';
import { type RequestLine, writeRequestLine } from '../observability/request-line.ts';
import { endServerSpan, recordException, startServerSpan } from '../observability/tracing.ts';
import type { Admission } from '../overload/admission.ts';
import { HandlerTimeouts } from '../overload/handler-timeouts.ts';
import { type InFlight, LIMIT_MS, UNMATCHED_ROUTE } from '../overload/in-flight.ts';
import { saveSession } from '../sessions/session-host.ts';
import type { QueuedHandler } from '../transport/request-queue.ts';
import { abortedByClient, ClientGoneError, clientGone } from './client-gone.ts';
import { adoptResult } from './compose.ts';
import { Ctx, type CtxScope, expireRequest, isExpired, sessionOf } from './ctx.ts';
import { type HookChain, runRequestHooks, type Seams } from './hooks.ts';
import { bytesSent, discardReply, mustClose, type ReplyHost, writeReply } from './reply.ts';
import { requestIdFrom } from './request-id.ts';
import type { RouteEntry, Router } from './router.ts';

const { context: otelContext, ROOT_CONTEXT } = otel;

/**
 * What the pipeline reads from its App on every request, grouped by concern. The groups are built
 * once with the host and never replaced: the pipeline reads a group once where it needs several of
 * its fields.
 */
export interface PipelineHost {
  readonly router: Router;
  /** The App-level `onRequest` hooks (they also run for a path no route matches). */
  readonly requestHooks: HookChain[number];
  readonly seams: Seams;
  readonly scope: CtxScope;
  readonly inFlight: InFlight;
  readonly security: PipelineSecurity;
  readonly replies: PipelineReplies;
  readonly observability: PipelineObservability;
  readonly overload: PipelineOverload;
}

/** The headers the config decides for every request and reply (`cors`, `csrf`, `securityHeaders`). */
export interface PipelineSecurity {
  /** `cors`; undefined while `cors.origins` is empty (no CORS header, no `Vary: Origin`). */
  readonly cors: Cors | undefined;
  /** `csrf`: refuses a browser's unsafe request or WebSocket upgrade from another origin; undefined when `csrf.enabled` is false. */
  readonly crossOrigin: CrossOriginCheck | undefined;
  /** The headers of `securityHeaders`, computed once: written on every reply before anything else. */
  readonly headers: readonly HeaderPair[];
}

/** What writing a reply reads (see `ReplyHost`), and whether a problem hides its internal details (`env: production`). */
export interface PipelineReplies extends ReplyHost {
  readonly production: boolean;
}

/** The request's log line, metrics and trace. */
export interface PipelineObservability {
  readonly logger: Logger;
  readonly logRequests: boolean;
  /** Requests counted and logged by protocol (an App with `tls` or `http2`); undefined otherwise. */
  readonly wire: WireMetrics | undefined;
  /** Replaced by `app.setMetricsCollector`. */
  metrics: MetricsCollector | undefined;
  /** Replaced by `app.setTracer`. */
  tracer: Tracer;
}

/** Load shedding (`overload`) and what the pipeline's own 503s count. */
export interface PipelineOverload {
  /** The admission control (`overload`); undefined when `overload.enabled` is false. */
  readonly admission: Admission | undefined;
  /** The `Retry-After` of an `OVERLOADED` 503, in seconds (`overload.retryAfterS`). */
  readonly retryAfterS: number;
  /** `flotilla_requests_shed_total{reason}`; undefined without metrics. */
  readonly shed: Counter<'reason'> | undefined;
}

/**
 * The request pipeline, top to bottom: request id and security headers → log/metrics/trace start →
 * CORS → route lookup → admission (503 `OVERLOADED` while the worker sheds) →
 * handler timeout armed → rate limit (429 `RATE_LIMITED`) → `onRequest` hooks → client still there? →
 * params/query validation → middlewares → client still there? → body →
 * handler → serialize → log/metrics/trace end. Anything thrown on the way
 * converges in `fail`, the one boundary that turns errors into problem
 * responses (after the App's error handler, if any, mapped them); a handler
 * timeout goes through it too, and whatever the route's work produces after
 * it is dropped.
 */
export function createRequestHandler(host: PipelineHost): RequestPipeline {
  // one timer for every request of this pipeline: it answers a request that ran past its limit here
  const timeouts = new HandlerTimeouts<Ctx>(host.inFlight, (ctx) => handlerTimedOut(host, ctx));
  const securityHeaders = host.security.headers;
  // `started`: when the request was read, if it waited in the RequestQueue since; `admitted`: never shed (see QueuedHandler)
  const handler: QueuedHandler = (req, res, started = performance.now(), admitted = false, backlog = 0, expectedMs = 0) => {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    setSecurityHeaders(res, securityHeaders);
    const url = req.url ?? '/';
    const ctx = new Ctx(host.scope, req, res, requestId, pathOf(url));
    // the request's scope: `currentContext()` anywhere in its work, its error handler and its reply
    runInScope(ctx, serve, host, timeouts, ctx, url, started, admitted, backlog, expectedMs);
  };
  return { handler, timeouts };
}

/** A request pipeline (see {@link createRequestHandler}): its handler, and its handler timeouts, stopped when the App closes. */
export interface RequestPipeline {
  readonly handler: QueuedHandler;
  /** The handler timeouts of its requests (`timeouts.handlerMs`, a route's `timeoutMs`). */
  readonly timeouts: HandlerTimeouts<Ctx>;
}

/** One request from its `Ctx` on, run in its scope (see `createRequestHandler`). */
function serve(
  host: PipelineHost,
  timeouts: HandlerTimeouts<Ctx>,
  ctx: Ctx,
  url: string,
  started: number,
  admitted: boolean,
  backlog: number,
  expectedMs: number,
): void {
  host.inFlight.enter(ctx);
  const span = startServerSpan(host.observability.tracer, ctx);
  let ended = false;
  const end = (completed: boolean) => {
    if (ended) return;
    ended = true;
    host.inFlight.leave(ctx);
    record(host, ctx, started, completed, span);
  };
  ctx.res.once('finish', () => end(true));
  ctx.res.once('close', () => end(false));
  // a request that waited in the queue may find its client gone: its response closed before anyone listened
  if (ctx.res.destroyed) end(false);
  let routed: void | Promise<void>;
  try {
    // a request without a span of its own runs in the root context anyway: spare the context switch
    routed =
      ctx.otel === ROOT_CONTEXT
        ? route(host, timeouts, ctx, url, started, admitted, backlog, expectedMs)
        : otelContext.with(ctx.otel, route, undefined, host, timeouts, ctx, url, started, admitted, backlog, expectedMs);
  } catch (error) {
    fail(host, ctx, error);
    return;
  }
  if (routed === undefined) answer(host, ctx);
  else
    routed.then(
      () => {
        if (!isExpired(ctx)) answer(host, ctx);
      },
      (error: unknown) => {
        if (!isExpired(ctx)) fail(host, ctx, error);
      },
    );
}

/** Everything up to the reply; synchronous unless a middleware, the body or the handler is not. */
function route(
  host: PipelineHost,
  timeouts: HandlerTimeouts<Ctx>,
  ctx: Ctx,
  url: string,
  started: number,
  admitted: boolean,
  backlog: number,
  expectedMs: number,
): void | Promise<void> {
  checkHost(ctx.req);
  const { cors, crossOrigin: refuse } = host.security;
  if (cors?.(ctx.req, ctx.res)) {
    ctx.noContent();
    return;
  }
  if (refuse !== undefined) crossOrigin(refuse, ctx);
  const found = host.router.find(ctx.method, url);
  if (found.kind === 'miss') {
    // the App's hooks run first for a 405 or a malformed URL too: an auth hook answers before `Allow` maps the routes
    const answer = () => (ctx.reply.kind === 'none' ? notFound(host, ctx, found.error) : undefined);
    const hooked = runRequestHooks([host.requestHooks], ctx);
    return hooked === undefined ? answer() : hooked.then(answer);
  }
  const { entry } = found;
  ctx.route = entry.route.path;
  // shed before any of the route's work: no hook, no middleware, no body read
  if (entry.sheddable && !admitted && host.overload.admission?.admit(started, performance.now(), backlog, expectedMs) === false)
    throw overloaded(host);
  ctx.params = found.params;
  ctx.query = found.query;
  ctx.serializer = entry.serializer;
  if (entry.timeoutMs > 0) timeouts.watch(ctx, started + entry.timeoutMs, entry.timeoutMs);
  // a route without a rate limit pays this one check; one with a counter elsewhere waits for its count
  if (entry.limit !== undefined) {
    const counted = entry.limit(ctx);
    if (counted !== undefined) return counted.then(() => (isExpired(ctx) ? undefined : hooks(host, ctx, entry)));
  }
  return hooks(host, ctx, entry);
}

/** The `onRequest` hooks, then the route's work. */
function hooks(host: PipelineHost, ctx: Ctx, entry: RouteEntry): void | Promise<void> {
  // no closure on the common path: synchronous hooks (or none) go straight on
  const hooked = runRequestHooks(entry.hooks, ctx);
  return hooked === undefined ? handle(host, ctx, entry) : hooked.then(() => handle(host, ctx, entry));
}

/**
 * After the `onRequest` hooks, unless one chose the reply: the route's validation, middlewares, body
 * and handler; none of it when the client is gone already (the body's reader checks again).
 */
function handle(host: PipelineHost, ctx: Ctx, entry: RouteEntry): void | Promise<void> {
  if (ctx.reply.kind !== 'none' || isExpired(ctx)) return;
  if (clientGone(ctx.res)) {
    notRun(host, ctx);
    return;
  }
  // an asynchronous schema (a library's async refinement) is awaited; the common path stays synchronous
  const checked = entry.validator.head(ctx);
  return checked === undefined ? entry.run(ctx) : checked.then(() => entry.run(ctx));
}

/**
 * `csrf`: an unsafe method, or an upgrade (a WebSocket's handshake, refused before it completes),
 * from another site is a 403, judged on the host the client asked for (`ctx.host`, a trusted proxy's).
 */
function crossOrigin(refuse: CrossOriginCheck, ctx: Ctx): void {
  const upgrade = isUpgradeRequest(ctx.req);
  if (!(upgrade || isUnsafe(ctx.method)) || !refuse(ctx.req.headers, ctx.host)) return;
  const what = upgrade ? 'a cross-origin WebSocket upgrade' : 'a cross-origin request';
  throw KError.of('CROSS_ORIGIN_REQUEST', `${what} from a browser: refused (csrf)`);
}

/** The pipeline's own 503s, accounted for without a `request failed` line: counted, and a timeout logged once. */
const accounted = new WeakSet<object>();

/** The 503 of a request the admission control sheds, counted (a line each would flood the log under load). */
function overloaded(host: PipelineHost): KError {
  const { shed, retryAfterS } = host.overload;
  shed?.inc({ reason: 'overload' });
  const error = KError.of('OVERLOADED', 'the server is overloaded: retry later', { headers: { 'Retry-After': String(retryAfterS) } });
  accounted.add(error);
  return error;
}

/** A request whose client left before its handler started: not run, answered with nothing (499 in its log line), counted. */
function notRun(host: PipelineHost, ctx: Ctx): void {
  host.overload.shed?.inc({ reason: 'client-gone' });
  if (host.observability.logger.isLevelEnabled('debug')) ctx.logger.debug({ route: ctx.route }, 'client gone before the handler: not run');
}

/**
 * A request whose route work ran past its limit: its signal aborts with a `TimeoutError`, what the
 * work produces later is dropped, and it is answered 503 `HANDLER_TIMEOUT` through `fail`. Called by
 * the pipeline's {@link HandlerTimeouts}, which kept the route's limit with the request's deadline.
 */
function handlerTimedOut(host: PipelineHost, ctx: Ctx): void {
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  const ms = ctx[LIMIT_MS];
  const message = `the handler ran longer than ${ms} ms`;
  expireRequest(ctx, new DOMException(message, 'TimeoutError'));
  host.overload.shed?.inc({ reason: 'handler-timeout' });
  ctx.logger.warn({ route: ctx.route, timeoutMs: ms }, 'handler timed out');
  const error = KError.of('HANDLER_TIMEOUT', message);
  accounted.add(error);
  fail(host, ctx, error);
}

/** No route: the App's not-found handler answers (404 unless it sets another status), or the 404 problem. */
function notFound(host: PipelineHost, ctx: Ctx, error: KError): void | Promise<void> {
  const handler = host.seams.notFoundHandler;
  if (handler === undefined || error.code !== 'ROUTE_NOT_FOUND') throw error;
  ctx.statusCode = 404;
  return adoptResult(ctx, handler(ctx));
}

/** An HTTP/1.1 request has exactly one Host header (RFC 9112 §3.2); node:http alone would keep the first of several. */
function checkHost(req: IncomingMessage): void {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts === 1 || (hosts === 0 && req.httpVersion !== '1.1')) return;
  const problem = hosts === 0 ? 'the Host header is missing' : 'the Host header is repeated';
  throw KError.badRequest(problem, { headers: { Connection: 'close' } });
}

/**
 * The route's work is done: its session saved first when it asked for one (a failed request saves
 * none of its changes), then the reply.
 */
function answer(host: PipelineHost, ctx: Ctx): void {
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

function respond(host: PipelineHost, ctx: Ctx): void {
  // a client gone: nobody to answer
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  // the handler may have set a `Vary` of its own since the CORS step: `Origin` joins it
  host.security.cors?.vary(ctx.res);
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
function fail(host: PipelineHost, ctx: Ctx, error: unknown): void {
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
function logError(ctx: Ctx, error: unknown, message: string): void {
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
  host.security.cors?.vary(res);
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

function record(host: PipelineHost, ctx: Ctx, started: number, completed: boolean, span: Span): void {
  const durationMs = performance.now() - started;
  // 499: the client closed the connection before a response was sent (nginx's convention)
  const status = ctx.res.headersSent ? ctx.res.statusCode : completed ? ctx.statusCode : 499;
  const route = ctx.route || UNMATCHED_ROUTE;
  endServerSpan(span, ctx, status, completed);
  const observability = host.observability;
  try {
    observability.metrics?.recordRequest({ method: ctx.method, route, status, durationMs });
  } catch (error) {
    observability.logger.error({ err: error }, 'the metrics collector failed');
  }
  const wire = observability.wire?.request(ctx.req);
  if (!observability.logRequests) return;
  const line: RequestLine = {
    requestId: ctx.requestId,
    traceId: ctx.traceId, // left out of the line when undefined
    method: ctx.method,
    route,
    path: ctx.path,
    ip: ctx.ip,
    status,
    durationMs: Math.round(durationMs * 1000) / 1000,
    // streamed responses only (no lookup for the others); left out of the line otherwise
    bytes: ctx.reply.kind === 'stream' || ctx.reply.kind === 'sse' ? bytesSent(ctx) : undefined,
  };
  if (wire !== undefined) {
    line.protocol = wire.protocol;
    line.tls = wire.tls;
  }
  if (completed) writeRequestLine(observability.logger, line);
  // the client's doing, not the server's: no warning
  else observability.logger.info({ ...line, aborted: true }, 'request aborted');
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
