import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { otel } from '../../utils/otel-api.ts';

const { isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } = otel;

/** What a request's span reads and sets: the core's `Ctx` is one. */
export interface TracedRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  /** The matched route template; empty when no route matched. */
  readonly route: string;
  /** The request's OpenTelemetry context: its server span active in it, once started. */
  otel: Context;
  /** The trace id, when the span is recorded. */
  traceId: string | undefined;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * Starts the request's SERVER span (HTTP semantic conventions), a child of
 * the caller's trace when the registered propagator finds one in the headers,
 * and makes it the request's OpenTelemetry context. Attributes beyond the
 * method and path are computed only when the span is recorded, so the cost
 * without an SDK stays negligible.
 */
export function startServerSpan(tracer: Tracer, ctx: TracedRequest): Span {
  const parent: Context = propagation.extract(ROOT_CONTEXT, ctx.req.headers);
  const known = KNOWN_METHODS.has(ctx.method);
  const method = known ? ctx.method : '_OTHER';
  const span = tracer.startSpan(
    method === '_OTHER' ? 'HTTP' : method,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': method, 'url.path': ctx.path, 'url.scheme': 'http' },
    },
    parent,
  );
  // Without an SDK the span is a blank no-op: a context carrying it would only cost an allocation.
  ctx.otel = parent === ROOT_CONTEXT && !isSpanContextValid(span.spanContext()) ? ROOT_CONTEXT : trace.setSpan(parent, span);
  if (span.isRecording()) {
    const { req } = ctx;
    const [host = '', port] = splitHost(req.headers.host ?? '');
    span.setAttributes({
      'server.address': host,
      'server.port': port ?? req.socket?.localPort ?? 0,
      'client.address': req.socket?.remoteAddress ?? '',
      'user_agent.original': req.headers['user-agent'] ?? '',
      ...(known ? {} : { 'http.request.method_original': ctx.method }),
    });
    const { traceId, spanId, traceFlags } = span.spanContext();
    ctx.traceId = traceId;
    ctx.res.setHeader('traceresponse', `00-${traceId}-${spanId}-0${traceFlags.toString(16)}`);
  }
  return span;
}

/** Names the span after the route template, records the status (ERROR for 5xx and dropped connections, never for 4xx) and ends it. */
export function endServerSpan(span: Span, ctx: TracedRequest, status: number, completed: boolean): void {
  if (!span.isRecording()) {
    span.end();
    return;
  }
  if (ctx.route !== '') span.updateName(`${ctx.method} ${ctx.route}`).setAttribute('http.route', ctx.route);
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', String(status));
  else if (!completed)
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' }).setAttribute('error.type', 'aborted');
  span.end();
}

/** Records an exception on the request's span (a 5xx's cause). */
export function recordException(ctx: TracedRequest, error: unknown): void {
  const span = trace.getSpan(ctx.otel);
  if (span?.isRecording()) span.recordException(error instanceof Error ? error : String(error));
}

function splitHost(host: string): [string, number | undefined] {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(host);
  if (match === null) return [host, undefined];
  return [match[1] ?? '', match[2] === undefined ? undefined : Number(match[2])];
}
