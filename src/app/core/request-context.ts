import type { Context } from '@opentelemetry/api';
import type { Logger } from 'pino';

/**
 * Request-scoped context handed to repositories and services (the seed's
 * `context.Context`).
 *
 * @example
 * const page = await repo.findAll(ctx.context(), ctx.parsePagination());
 */
export interface RequestContext {
  /**
   * Aborts when the client goes away (reason: a `ClientGoneError`), when the handler runs past
   * `timeouts.handlerMs` or the route's `timeoutMs` (a `DOMException` named `TimeoutError`), or when
   * the shutdown deadline passes.
   */
  signal: AbortSignal;
  requestId: string;
  /** The request's logger: every line carries the request id. */
  logger: Logger;
  /** The OpenTelemetry context of the request (its server span is active in it). */
  otel: Context;
}
