/**
 * The Fastify 5 contenders: what flotilla does by default — its pino logger
 * (configured like flotilla's) writing one line per request to stdout via a
 * LogController, a random UUID request id echoed as X-Request-Id,
 * @fastify/cors, a prom-client counter + histogram per request, params
 * validation (ajv, as flotilla) and RFC 9457 problem responses for errors and
 * unknown routes, the request's AsyncLocalStorage scope and the client's `ip` in
 * the log line (as flotilla's), flotilla's default security headers (set in the same hook
 * as the request id) and `@fastify/compress` with flotilla's threshold (as
 * flotilla, it compresses nothing for wrk's requests, which accept no
 * encoding, but adds `Vary: Accept-Encoding`). Without response schemas the replies are serialized with
 * JSON.stringify; with them (the same `Page<T>` and item schemas as flotilla's,
 * schemas.ts) Fastify compiles them with fast-json-stringify. The request log
 * line can be turned off (Fastify's `disableRequestLogging`), as flotilla's
 * `logging.requests: false`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import {
  announce,
  COMPRESSION_THRESHOLD,
  CORS_METHODS,
  EXPOSED_HEADERS,
  HttpProblem,
  itemById,
  ORIGIN,
  pageOf,
  parsePage,
  pathOf,
  portArg,
  problemBody,
  problemOf,
  SECURITY_HEADERS,
} from './data.ts';
import { benchLogger } from './logger.ts';
import { requestMetrics } from './request-metrics.ts';
import { ITEM_SCHEMA, PAGE_SCHEMA } from './schemas.ts';

const record = requestMetrics();
const requestScope = new AsyncLocalStorage<FastifyRequest>();

/** Fastify's request logging, one line per request (no "incoming request" line) with flotilla's fields. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      path: pathOf(request.url),
      ip: request.ip,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    if (error) reply.log.warn({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

function sendProblem(request: FastifyRequest, reply: FastifyReply, status: number, code: string, detail: string): FastifyReply {
  return reply
    .code(status)
    .type('application/problem+json')
    .send(problemBody(status, code, detail, pathOf(request.url), request.id));
}

/** Whether the `LOG_REQUESTS` environment variable leaves the request log line on (anything but `false`). */
export function requestLogFromEnv(): boolean {
  return process.env['LOG_REQUESTS'] !== 'false';
}

/** The Fastify app of the items routes (with the bench's pino logger). */
/** Fastify's own server options (`http2`, `https`): the HTTP/2 bench (bench/http2.ts) runs the same app over them. */
export type FastifyServerChoice = { http2?: true; https?: { key: string; cert: string; allowHTTP1: boolean } };

export type ItemsFastify = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>;

/**
 * The Fastify app with the items routes, ready to listen (not listening):
 * `responseSchemas` compiles the replies' schemas, `requestLog` writes one log
 * line per request.
 */
export async function buildFastify(responseSchemas: boolean, requestLog = true, server: FastifyServerChoice = {}): Promise<ItemsFastify> {
  const app = Fastify({
    ...(server as object),
    loggerInstance: benchLogger('items'),
    logController: new OneLinePerRequest({ requestIdLogLabel: 'requestId', disableRequestLogging: !requestLog }),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    keepAliveTimeout: 72_000,
  });

  await app.register(cors, { origin: [ORIGIN], methods: CORS_METHODS, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 });
  await app.register(compress, { threshold: COMPRESSION_THRESHOLD, encodings: ['zstd', 'br', 'gzip'] });

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    reply.headers(SECURITY_HEADERS);
    // the request's scope for the rest of its work, as flotilla's currentContext() (@fastify/request-context does this)
    requestScope.run(request, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime);
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    if ((error as { validation?: unknown }).validation !== undefined)
      return sendProblem(request, reply, 400, 'VALIDATION_FAILED', String(error));
    const p = problemOf(error);
    if (p.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, p.status, p.code, p.detail);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 404, 'ROUTE_NOT_FOUND', `no route for ${request.method} ${pathOf(request.url)}`),
  );

  app.get('/items', responseSchemas ? { schema: { response: { 200: PAGE_SCHEMA } } } : {}, (request) => {
    const q = parsePage(request.query as Record<string, unknown>);
    return pageOf(q.page, q.limit);
  });
  app.get<{ Params: { id: number } }>(
    '/items/:id',
    {
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } },
        ...(responseSchemas ? { response: { 200: ITEM_SCHEMA } } : {}),
      },
    },
    (request) => {
      const item = itemById(request.params.id);
      if (item === undefined) throw new HttpProblem(404, 'NOT_FOUND', `item ${request.params.id} does not exist`);
      return item;
    },
  );
  return app;
}

/** Runs Fastify with the items routes on `portArg()` and announces `ready <port>` on stderr. */
export async function runFastify(responseSchemas: boolean, requestLog = true): Promise<void> {
  const app = await buildFastify(responseSchemas, requestLog);
  const port = portArg();
  await app.listen({ port, host: '127.0.0.1' });
  announce(port);
  process.on('SIGTERM', () => void app.close());
}
