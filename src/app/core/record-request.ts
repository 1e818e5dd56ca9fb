import type { Span } from '@opentelemetry/api';
import { type RequestLine, writeRequestLine } from '../observability/request-line.ts';
import { endServerSpan } from '../observability/tracing.ts';
import { STARTED } from '../overload/arrival.ts';
import { UNMATCHED_ROUTE } from '../overload/in-flight.ts';
import type { Ctx } from './ctx.ts';
import type { PipelineObservability } from './host.ts';
import { bytesSent } from './reply.ts';

/**
 * A request has ended, answered (`completed`) or not (its client left): its span ended, its metrics
 * recorded, and its log line written.
 *
 * @example
 * res.once('finish', () => recordRequest(host.observability, ctx, true, span));
 */
export function recordRequest(observability: PipelineObservability, ctx: Ctx, completed: boolean, span: Span): void {
  const durationMs = performance.now() - ctx[STARTED];
  // 499: the client closed the connection before a response was sent (nginx's convention)
  const status = ctx.res.headersSent ? ctx.res.statusCode : completed ? ctx.statusCode : 499;
  const route = ctx.route || UNMATCHED_ROUTE;
  endServerSpan(span, ctx, status, completed);
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
