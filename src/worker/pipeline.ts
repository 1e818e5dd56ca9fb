import type { IncomingMessage, ServerResponse } from 'node:http';
import { context as otelContext, propagation, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { type ProblemResponse, toProblem } from '../errors/problem.ts';
import type { MetricsCollector } from '../metrics/metrics-collector.ts';
import type { Cors } from './cors.ts';
import { Ctx, type CtxScope } from './ctx.ts';
import type { InFlight } from './in-flight.ts';
import { requestIdFrom } from './request-id.ts';
import type { Router } from './router.ts';

/** What the pipeline reads from its App on every request. */
export interface PipelineHost {
  readonly router: Router;
  readonly cors: Cors;
  readonly scope: CtxScope;
  readonly logger: Logger;
  readonly production: boolean;
  readonly logRequests: boolean;
  readonly inFlight: InFlight;
  readonly draining: boolean;
  readonly metrics: MetricsCollector | undefined;
  readonly tracer: Tracer;
}

const UNMATCHED = 'unmatched';

/**
 * The request pipeline, top to bottom: request id → log/metrics/trace start →
 * CORS → route lookup → params/query validation → middlewares → body → handler
 * → serialize → log/metrics/trace end. Anything thrown on the way converges in
 * `fail`, the one boundary that turns errors into problem responses.
 */
export function createRequestHandler(host: PipelineHost): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    host.inFlight.enter();
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    const url = req.url ?? '/';
    const ctx = new Ctx(host.scope, req, res, requestId, pathOf(url));
    const span = startSpan(host.tracer, ctx);
    let ended = false;
    const end = (completed: boolean) => {
      if (ended) return;
      ended = true;
      host.inFlight.leave();
      record(host, ctx, started, completed, span);
    };
    res.once('finish', () => end(true));
    res.once('close', () => end(false));
    otelContext
      .with(ctx.otel, () => route(host, ctx, url))
      .then(
        () => respond(host, ctx),
        (error: unknown) => fail(host, ctx, error),
      );
  };
}

async function route(host: PipelineHost, ctx: Ctx, url: string): Promise<void> {
  if (host.cors(ctx.req, ctx.res)) {
    ctx.noContent();
    return;
  }
  const found = host.router.find(ctx.method, url);
  if (found.kind === 'miss') throw found.error;
  ctx.route = found.entry.route.path;
  ctx.params = found.params;
  ctx.query = found.query;
  found.entry.validator.head(ctx);
  await found.entry.run(ctx);
}

function respond(host: PipelineHost, ctx: Ctx): void {
  const res = ctx.res;
  if (res.headersSent) return;
  try {
    const reply = ctx.reply;
    let body: string | Buffer = '';
    let type = '';
    if (reply.kind === 'json') {
      body = JSON.stringify(reply.value) ?? 'null';
      type = 'application/json; charset=utf-8';
    } else if (reply.kind === 'raw') {
      body = reply.body;
      type = reply.type;
    }
    if (type !== '') res.setHeader('Content-Type', type);
    if (ctx.statusCode !== 204 && ctx.statusCode !== 304) res.setHeader('Content-Length', Buffer.byteLength(body));
    if (host.draining) res.setHeader('Connection', 'close');
    res.statusCode = ctx.statusCode;
    res.end(body);
  } catch (error) {
    fail(host, ctx, error);
  }
}

/** The one place where errors become responses. */
function fail(host: PipelineHost, ctx: Ctx, error: unknown, fallback = false): void {
  const problem = toProblem(error, ctx.path, ctx.requestId, host.production);
  if (problem.internal) {
    ctx.logger.error({ err: error, route: ctx.route || UNMATCHED }, 'request failed');
    trace.getSpan(ctx.otel)?.recordException(error instanceof Error ? error : String(error));
  }
  const res = ctx.res;
  ctx.statusCode = problem.status;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  try {
    sendProblem(host, res, problem);
  } catch (unsendable) {
    // details JSON cannot hold (BigInt, cycles) or header values node:http refuses: answer a plain 500 instead
    if (fallback) res.destroy();
    else fail(host, ctx, new Error('the error response could not be sent', { cause: unsendable }), true);
  }
}

function sendProblem(host: PipelineHost, res: ServerResponse, problem: ProblemResponse): void {
  const body = JSON.stringify(problem.body);
  for (const name of res.getHeaderNames()) {
    if (name.startsWith('content-')) res.removeHeader(name);
  }
  if (problem.headers !== undefined) for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  if (host.draining) res.setHeader('Connection', 'close');
  res.setHeader('Content-Type', 'application/problem+json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.statusCode = problem.status;
  res.end(body);
}

/** The request's server span, a child of the caller's trace when a registered propagator finds one in the headers. */
function startSpan(tracer: Tracer, ctx: Ctx): Span {
  const parent = propagation.extract(otelContext.active(), ctx.headers);
  const attributes = { 'http.request.method': ctx.method, 'url.path': ctx.path };
  const span = tracer.startSpan(ctx.method, { kind: SpanKind.SERVER, attributes }, parent);
  ctx.otel = trace.setSpan(parent, span);
  return span;
}

function record(host: PipelineHost, ctx: Ctx, started: number, completed: boolean, span: Span): void {
  const durationMs = performance.now() - started;
  const status = ctx.res.headersSent ? ctx.res.statusCode : ctx.statusCode;
  const route = ctx.route || UNMATCHED;
  if (ctx.route !== '') span.updateName(`${ctx.method} ${ctx.route}`).setAttribute('http.route', ctx.route);
  span.setAttribute('http.response.status_code', status);
  if (status >= 500 || !completed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
  host.metrics?.recordRequest({ method: ctx.method, route, status, durationMs });
  if (!host.logRequests) return;
  const line = {
    requestId: ctx.requestId,
    method: ctx.method,
    route,
    path: ctx.path,
    status,
    durationMs: Math.round(durationMs * 1000) / 1000,
  };
  if (!completed) host.logger.warn({ ...line, aborted: true }, 'request aborted');
  else host.logger.info(line, 'request completed');
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
