import { KError } from '../../errors/k-error.ts';
import { runInScope } from '../../utils/context-storage.ts';
import { otel } from '../../utils/otel-api.ts';
import { startServerSpan } from '../observability/tracing.ts';
import { ADMITTED, BACKLOG, EXPECTED_MS, STARTED } from '../overload/arrival.ts';
import { HandlerTimeouts } from '../overload/handler-timeouts.ts';
import { LIMIT_MS } from '../overload/in-flight.ts';
import type { QueuedHandler } from '../transport/request-queue.ts';
import { accountedFor, answer, fail } from './answer.ts';
import { adoptResult } from './compose.ts';
import { Ctx, expireRequest, isExpired } from './ctx.ts';
import { runRequestHooks } from './hooks.ts';
import type { PipelineHost } from './host.ts';
import { recordRequest } from './record-request.ts';
import { requestIdFrom } from './request-id.ts';
import { routeSteps } from './route-steps.ts';
import type { StepsOf } from './router.ts';
import { runSteps } from './steps.ts';

const { context: otelContext, ROOT_CONTEXT } = otel;

/**
 * The request pipeline, top to bottom: request id → log/metrics/trace start → the arrival steps
 * (security headers, Host check, CORS, CSRF) → route lookup → the route's steps, made at registration
 * (by default: admission, 503 `OVERLOADED` while the worker sheds → handler timeout armed → rate
 * limit, 429 `RATE_LIMITED` → `onRequest` hooks → client still there? → params/query validation →
 * middlewares → body → handler) → the session saved → serialize → log/metrics/trace end. Anything
 * thrown on the way converges in `fail` (answer.ts), the one boundary that turns errors into
 * problem responses (after the App's error handler, if any, mapped them); a handler timeout goes
 * through it too, and whatever the route's work produces after it is dropped.
 */
export function createRequestHandler(host: PipelineHost): RequestPipeline {
  // one timer for every request of this pipeline: it answers a request that ran past its limit here
  const timeouts = new HandlerTimeouts<Ctx>(host.inFlight, (ctx) => handlerTimedOut(host, ctx));
  const pipeline = { timeouts };
  const factories = host.steps.route;
  // `started`: when the request was read, if it waited in the RequestQueue since; `admitted`: never shed (see QueuedHandler)
  const handler: QueuedHandler = (req, res, started = performance.now(), admitted = false, backlog = 0, expectedMs = 0) => {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    const url = req.url ?? '/';
    const ctx = new Ctx(host.scope, req, res, requestId, pathOf(url));
    ctx[STARTED] = started;
    ctx[ADMITTED] = admitted;
    ctx[BACKLOG] = backlog;
    ctx[EXPECTED_MS] = expectedMs;
    // the request's scope: `currentContext()` anywhere in its work, its error handler and its reply
    runInScope(ctx, serve, host, ctx, url);
  };
  return { handler, timeouts, stepsOf: (route) => routeSteps(factories, route, pipeline) };
}

/** A request pipeline (see {@link createRequestHandler}). */
export interface RequestPipeline {
  readonly handler: QueuedHandler;
  /** The handler timeouts of its requests (`timeouts.handlerMs`, a route's `timeoutMs`), stopped when the App closes. */
  readonly timeouts: HandlerTimeouts<Ctx>;
  /** Makes a route's steps at registration (the Router's `steps`). */
  readonly stepsOf: StepsOf;
}

/** One request from its `Ctx` on, run in its scope (see `createRequestHandler`). */
function serve(host: PipelineHost, ctx: Ctx, url: string): void {
  host.inFlight.enter(ctx);
  const span = startServerSpan(host.observability.tracer, ctx);
  let ended = false;
  const end = (completed: boolean) => {
    if (ended) return;
    ended = true;
    host.inFlight.leave(ctx);
    recordRequest(host.observability, ctx, completed, span);
  };
  ctx.res.once('finish', () => end(true));
  ctx.res.once('close', () => end(false));
  // a request that waited in the queue may find its client gone: its response closed before anyone listened
  if (ctx.res.destroyed) end(false);
  let routed: void | Promise<void>;
  try {
    // a request without a span of its own runs in the root context anyway: spare the context switch
    routed = ctx.otel === ROOT_CONTEXT ? route(host, ctx, url) : otelContext.with(ctx.otel, route, undefined, host, ctx, url);
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

/** Everything up to the reply: the arrival steps, the route's lookup, its steps; synchronous unless a step is not. */
function route(host: PipelineHost, ctx: Ctx, url: string): void | Promise<void> {
  const arrival = host.steps.arrival;
  for (let i = 0; i < arrival.length; i++) {
    (arrival[i] as (ctx: Ctx) => void)(ctx);
    if (ctx.reply.kind !== 'none') return;
  }
  const found = host.router.find(ctx.method, url);
  if (found.kind === 'miss') {
    // the App's hooks run first for a 405 or a malformed URL too: an auth hook answers before `Allow` maps the routes
    const answer = () => (ctx.reply.kind === 'none' ? notFound(host, ctx, found.error) : undefined);
    const hooked = runRequestHooks([host.requestHooks], ctx);
    return hooked === undefined ? answer() : hooked.then(answer);
  }
  const { entry } = found;
  ctx.route = entry.route.path;
  ctx.params = found.params;
  ctx.query = found.query;
  ctx.serializer = entry.serializer;
  return runSteps(entry.steps, ctx);
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
  fail(host, ctx, accountedFor(KError.of('HANDLER_TIMEOUT', message)));
}

/** No route: the App's not-found handler answers (404 unless it sets another status), or the 404 problem. */
function notFound(host: PipelineHost, ctx: Ctx, error: KError): void | Promise<void> {
  const handler = host.seams.notFoundHandler;
  if (handler === undefined || error.code !== 'ROUTE_NOT_FOUND') throw error;
  ctx.statusCode = 404;
  return adoptResult(ctx, handler(ctx));
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
