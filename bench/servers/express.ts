/**
 * Contender 3: Express 5 with middleware equivalent to flotilla's defaults:
 * a random UUID request id echoed as X-Request-Id, one pino line per request
 * (logger configured like flotilla's), `cors`, a prom-client counter +
 * histogram per request, and RFC 9457 problem responses. ETag and
 * X-Powered-By are off (flotilla sends neither).
 */
import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  announce,
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
} from '../services/data.ts';
import { benchLogger } from '../services/logger.ts';
import { requestMetrics } from '../services/request-metrics.ts';

const logger = benchLogger('items');
const record = requestMetrics();
const SANE = /^[\x21-\x7e]{1,128}$/;
const app = express();
app.disable('etag');
app.disable('x-powered-by');

app.use((req: Request, res: Response, next: NextFunction) => {
  const started = performance.now();
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' && SANE.test(header) ? header : randomUUID();
  res.locals['requestId'] = requestId;
  res.setHeader('X-Request-Id', requestId);
  for (const name in SECURITY_HEADERS) res.setHeader(name, SECURITY_HEADERS[name]!);
  res.once('finish', () => {
    const durationMs = performance.now() - started;
    const route = req.route === undefined ? 'unmatched' : `${req.baseUrl}${req.route.path as string}`;
    record(req.method, route, res.statusCode, durationMs);
    const line = {
      requestId,
      method: req.method,
      route,
      path: req.path,
      status: res.statusCode,
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
    logger.info(line, 'request completed');
  });
  next();
});
app.use(cors({ origin: [ORIGIN], methods: CORS_METHODS, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 }));

app.get('/items', (req, res) => {
  const q = parsePage(req.query as Record<string, unknown>);
  res.json(pageOf(q.page, q.limit));
});
app.get('/items/:id', (req, res) => {
  const id = req.params.id;
  const item = /^[0-9]+$/.test(id) ? itemById(Number(id)) : undefined;
  if (item === undefined) throw new HttpProblem(404, 'NOT_FOUND', `item ${id} does not exist`);
  res.json(item);
});

function sendProblem(req: Request, res: Response, status: number, code: string, detail: string): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(problemBody(status, code, detail, pathOf(req.originalUrl), String(res.locals['requestId'])));
}
app.use((req: Request, res: Response) => sendProblem(req, res, 404, 'ROUTE_NOT_FOUND', `no route for ${req.method} ${req.path}`));
app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
  const p = problemOf(error);
  if (p.status >= 500) logger.error({ err: error }, 'request failed');
  sendProblem(req, res, p.status, p.code, p.detail);
});

const port = portArg();
const server = app.listen(port, '127.0.0.1', () => announce(port));
server.keepAliveTimeout = 72_000;
process.on('SIGTERM', () => {
  server.close();
  server.closeIdleConnections();
});
