import type { Context } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Page, PageQuery } from '../pagination/page.ts';

/**
 * Request-scoped context handed to repositories and services: the request's
 * id, logger, cancellation signal, trace context and state, without the HTTP parts.
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
  /** What middlewares left for the handlers (`ctx.state`); a scheduled job's run starts with an empty one. */
  state: Record<string, unknown>;
}

/**
 * A data source for one kind of item; only `findAll` is required.
 *
 * @example
 * class BookRepo implements Repository<Book, number> {
 *   async findAll(ctx: RequestContext, q: PageQuery): Promise<Page<Book>> {
 *     const rows = await db.query('SELECT * FROM books LIMIT $1 OFFSET $2', [q.limit, offsetOf(q)], { signal: ctx.signal });
 *     return newPage(rows, await db.count('books'), q.page, q.limit);
 *   }
 * }
 */
export interface Repository<T, ID> {
  findAll(ctx: RequestContext, q: PageQuery): Promise<Page<T>>;
  /** Resolves `undefined` when no item has this id. */
  findById?(ctx: RequestContext, id: ID): Promise<T | undefined>;
  create?(ctx: RequestContext, input: Partial<T>): Promise<T>;
  /** Resolves `undefined` when no item has this id. */
  update?(ctx: RequestContext, id: ID, patch: Partial<T>): Promise<T | undefined>;
  /** Resolves `false` when no item had this id. */
  delete?(ctx: RequestContext, id: ID): Promise<boolean>;
}
